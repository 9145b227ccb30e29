package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// End to end through the real loop: what a project's CLAUDE.md imports
// and its .claude skills, commands and agents are judged on the file they
// reach after links, and a project is the repository root or, outside a
// repository, the working directory. What is left out never reaches the
// scripted API and is reported in the stream as a system/informational
// warning the host sees.

// memimportTempDir is a temporary directory by its physical path (the
// reports name files by theirs).
func memimportTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// memimportWrite writes files (path → text) and links (path → target).
func memimportWrite(t *testing.T, files, links map[string]string) {
	t.Helper()
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
}

// memimportRun runs one prompt in cwd against a scripted API and returns
// every request body the API received, the warnings of the stream (the
// text of each system/informational message at warning level, with its
// tag) and the init message.
func memimportRun(t *testing.T, cwd string) (bodies string, warnings []agentloop.Diagnostic, init *agentloop.SystemMessage) {
	t.Helper()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, NoSessionPersistence: true}) {
		if err != nil {
			t.Fatal(err)
		}
		sm, ok := m.(*agentloop.SystemMessage)
		if !ok {
			continue
		}
		if sm.Subtype == "init" && init == nil {
			init = sm
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			if sm.Subtype != "informational" {
				t.Errorf("diagnostic in a system/%s message", sm.Subtype)
			}
			warnings = append(warnings, d)
		}
	}
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
		b.WriteByte('\n')
	}
	if init == nil || init.Init == nil {
		t.Fatal("no init message")
	}
	return b.String(), warnings, init
}

// memimportHasWarning reports whether a warning of tag mentions all of
// words.
func memimportHasWarning(ws []agentloop.Diagnostic, tag string, words ...string) bool {
	return slices.ContainsFunc(ws, func(d agentloop.Diagnostic) bool {
		if d.Tag != tag {
			return false
		}
		for _, w := range words {
			if !strings.Contains(d.Text, w) {
				return false
			}
		}
		return true
	})
}

// TestMemImportNotGitProject: in a working directory that is not a git
// checkout (an unpacked archive in ~/Downloads), the project is the
// working directory: its CLAUDE.md cannot import ~/.ssh/id_rsa, a file
// elsewhere by absolute path, or one beside the project; it can import
// its own files and ~/.claude.
func TestMemImportNotGitProject(t *testing.T) {
	home, elsewhere := memimportTempDir(t), memimportTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	cwd := filepath.Join(home, "Downloads", "archive")
	other := filepath.Join(elsewhere, "passwd")
	memimportWrite(t, map[string]string{
		filepath.Join(home, ".ssh/id_rsa"):         "SECRET-SSH-KEY-7731",
		filepath.Join(home, ".claude/personal.md"): "PERSONAL-NOTES-OK",
		filepath.Join(home, "Downloads/beside.md"): "BESIDE-SECRET-5512",
		other:                                "ELSEWHERE-SECRET-0042",
		filepath.Join(cwd, "CLAUDE.md"):      "ARCHIVE-RULES @~/.ssh/id_rsa @" + other + " @../beside.md @docs/inside.md @~/.claude/personal.md\n",
		filepath.Join(cwd, "docs/inside.md"): "INSIDE-NOTES-OK",
	}, nil)
	bodies, warnings, _ := memimportRun(t, cwd)
	for _, want := range []string{"ARCHIVE-RULES", "INSIDE-NOTES-OK", "PERSONAL-NOTES-OK"} {
		if !strings.Contains(bodies, want) {
			t.Errorf("the request lacks %s", want)
		}
	}
	for _, banned := range []string{"SECRET-SSH-KEY-7731", "ELSEWHERE-SECRET-0042", "BESIDE-SECRET-5512"} {
		if strings.Contains(bodies, banned) {
			t.Errorf("the request carries %s", banned)
		}
	}
	for _, imp := range []string{"@~/.ssh/id_rsa", "@" + other, "@../beside.md"} {
		if !memimportHasWarning(warnings, agentloop.DiagMemory, imp, "left out", "inside the project") {
			t.Errorf("no memory_file warning in the stream for %s: %+v", imp, warnings)
		}
	}
}

// TestMemImportThroughLink: in a git project with Read(./secrets/**)
// denied, neither @secrets/key.txt nor @docs/setup.md (a link to it)
// brings the key in, nor a link leading outside the project; a skill
// directory and a command file that are links to outside the project or
// to the denied file are not loaded. Each is reported in the stream.
func TestMemImportThroughLink(t *testing.T) {
	home, elsewhere := memimportTempDir(t), memimportTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	cwd := filepath.Join(home, "repo")
	memimportWrite(t, map[string]string{
		filepath.Join(cwd, ".git/HEAD"):                  "ref: refs/heads/main\n",
		filepath.Join(cwd, ".claude/settings.json"):      `{"permissions":{"deny":["Read(./secrets/**)"]}}`,
		filepath.Join(cwd, "secrets/key.txt"):            "SECRET-KEY-CONTENT-9913",
		filepath.Join(cwd, "docs/guide.md"):              "GUIDE-OK",
		filepath.Join(cwd, "CLAUDE.md"):                  "REPO-RULES @secrets/key.txt @docs/setup.md @docs/ssh.md @docs/guide.md\n",
		filepath.Join(home, ".ssh/id_rsa"):               "SECRET-SSH-KEY-7731",
		filepath.Join(elsewhere, "evil/SKILL.md"):        "---\nname: evil\ndescription: EVIL-SKILL-DESC\n---\nEVIL-SKILL-BODY\n",
		filepath.Join(cwd, ".claude/skills/ok/SKILL.md"): "---\nname: ok\ndescription: OK-SKILL-DESC\n---\nOK\n",
	}, map[string]string{
		filepath.Join(cwd, "docs/setup.md"):           "../secrets/key.txt",
		filepath.Join(cwd, "docs/ssh.md"):             filepath.Join(home, ".ssh/id_rsa"),
		filepath.Join(cwd, ".claude/skills/evil"):     filepath.Join(elsewhere, "evil"),
		filepath.Join(cwd, ".claude/commands/key.md"): "../../secrets/key.txt",
		filepath.Join(cwd, ".claude/agents/ssh.md"):   filepath.Join(home, ".ssh/id_rsa"),
	})
	bodies, warnings, init := memimportRun(t, cwd)
	for _, want := range []string{"REPO-RULES", "GUIDE-OK", "OK-SKILL-DESC"} {
		if !strings.Contains(bodies, want) {
			t.Errorf("the request lacks %s", want)
		}
	}
	for _, banned := range []string{"SECRET-KEY-CONTENT-9913", "SECRET-SSH-KEY-7731", "EVIL-SKILL"} {
		if strings.Contains(bodies, banned) {
			t.Errorf("the request carries %s", banned)
		}
	}
	if slices.Contains(init.Init.Skills, "evil") || slices.Contains(init.Init.SlashCommands, "key") {
		t.Errorf("linked files loaded: skills %q, commands %q", init.Init.Skills, init.Init.SlashCommands)
	}
	key := filepath.Join(cwd, "secrets/key.txt")
	for _, w := range []struct {
		tag   string
		words []string
	}{
		{agentloop.DiagMemory, []string{"@secrets/key.txt", "a Read deny rule covers it"}},
		{agentloop.DiagMemory, []string{"@docs/setup.md", "it leads to " + key, "a Read deny rule covers it"}},
		{agentloop.DiagMemory, []string{"@docs/ssh.md", "it leads to " + filepath.Join(home, ".ssh/id_rsa"), "inside the project"}},
		{agentloop.DiagProjectFile, []string{filepath.Join(".claude/skills/evil/SKILL.md"), "outside the project"}},
		{agentloop.DiagProjectFile, []string{filepath.Join(".claude/commands/key.md"), "it leads to " + key, "a Read deny rule covers it"}},
		{agentloop.DiagProjectFile, []string{filepath.Join(".claude/agents/ssh.md"), "outside the project"}},
	} {
		if !memimportHasWarning(warnings, w.tag, w.words...) {
			t.Errorf("no %s warning in the stream with %q: %+v", w.tag, w.words, warnings)
		}
	}
}
