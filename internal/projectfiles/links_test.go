package projectfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/memory"
	"github.com/google/go-cmp/cmp"
)

// TestFilesJudgedOnPhysicalFile: a skill, command or agent file is judged
// on the file it reaches after links: a project's file that leads outside
// its Within directories, or whose target Admit refuses, is not loaded
// and is reported; links inside the project and the user's own links
// still load.
func TestFilesJudgedOnPhysicalFile(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(root, p) }
	skill := func(name string) string {
		return "---\nname: " + name + "\ndescription: " + name + "\n---\nBODY OF " + name + "\n"
	}
	agent := func(name string) string {
		return "---\nname: " + name + "\ndescription: " + name + "\n---\nPROMPT OF " + name + "\n"
	}
	for p, text := range map[string]string{
		"repo/.claude/skills/ok/SKILL.md":   skill("ok"),
		"repo/shared/skill/SKILL.md":        skill("shared"),
		"repo/shared/agent.md":              agent("sharedagent"),
		"repo/secrets/skill/SKILL.md":       skill("denied"),
		"repo/secrets/cmd.md":               "DENIED COMMAND\n",
		"repo/secrets/agent.md":             agent("deniedagent"),
		"repo/.claude/commands/plain.md":    "Plain command\n",
		"home/.ssh/id_rsa":                  "SSH KEY\n",
		"home/dotfiles/evil/SKILL.md":       skill("evil"),
		"home/dotfiles/mine/SKILL.md":       skill("mine"),
		"outside/agent.md":                  agent("spy"),
		"home/.claude/commands/personal.md": "Personal command\n",
	} {
		write(t, j(p), text)
	}
	for link, target := range map[string]string{
		"repo/.claude/skills/shared":         "../../shared/skill",        // inside the project: loads
		"repo/.claude/skills/evil":           j("home/dotfiles/evil"),     // a directory outside
		"repo/.claude/skills/denied":         "../../secrets/skill",       // a Read-denied directory
		"repo/.claude/commands/steal.md":     "../../../home/.ssh/id_rsa", // a file outside
		"repo/.claude/commands/secret.md":    "../../secrets/cmd.md",      // a Read-denied file
		"repo/.claude/agents/spy.md":         j("outside/agent.md"),       // a file outside
		"repo/.claude/agents/hidden.md":      "../../secrets/agent.md",    // a Read-denied file
		"repo/.claude/agents/sharedagent.md": "../../shared/agent.md",     // inside: loads
		"home/.claude/skills/mine":           "../../dotfiles/mine",       // the user's own link: loads
	} {
		if err := os.MkdirAll(filepath.Dir(j(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, j(link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	r := Load([]Dir{
		{Path: j("repo/.claude"), Source: "project", Within: []string{j("repo"), j("home/.claude")}},
		{Path: j("home/.claude"), Source: "user"},
	}, Options{Admit: func(path string) error {
		if strings.Contains(path, "/secrets/") {
			return errDenied
		}
		return nil
	}})
	var got []string
	for _, s := range r.Skills {
		got = append(got, "skill "+s.Name)
	}
	for _, c := range r.Commands {
		got = append(got, "command "+c.Name)
	}
	for _, a := range r.Agents {
		got = append(got, "agent "+a.Name)
	}
	want := []string{"skill mine", "skill ok", "skill shared", "command personal", "command plain", "agent sharedagent"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("loaded (-want +got):\n%s", d)
	}
	var probs []string
	for _, p := range r.Problems {
		probs = append(probs, strings.ReplaceAll(p, root, "/ROOT"))
	}
	wantProbs := []string{
		"skill file /ROOT/repo/.claude/skills/denied/SKILL.md is left out: it leads to /ROOT/repo/secrets/skill/SKILL.md: a Read deny rule covers it",
		"skill file /ROOT/repo/.claude/skills/evil/SKILL.md is left out: it leads to /ROOT/home/dotfiles/evil/SKILL.md, outside the project and the user directory",
		"command file /ROOT/repo/.claude/commands/secret.md is left out: it leads to /ROOT/repo/secrets/cmd.md: a Read deny rule covers it",
		"command file /ROOT/repo/.claude/commands/steal.md is left out: it leads to /ROOT/home/.ssh/id_rsa, outside the project and the user directory",
		"agent file /ROOT/repo/.claude/agents/hidden.md is left out: it leads to /ROOT/repo/secrets/agent.md: a Read deny rule covers it",
		"agent file /ROOT/repo/.claude/agents/spy.md is left out: it leads to /ROOT/outside/agent.md, outside the project and the user directory",
	}
	if d := cmp.Diff(wantProbs, probs); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

var errDenied = errors.New("a Read deny rule covers it")

// TestLinkSwappedAfterJudgement: a skill file replaced by a link (to a
// denied file) after it was judged is not read through the link.
func TestLinkSwappedAfterJudgement(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(root, "repo/.claude/skills/ok/SKILL.md")
	write(t, skill, "---\ndescription: ok\n---\nOK\n")
	write(t, filepath.Join(root, "repo/secrets/key.md"), "---\ndescription: stolen\n---\nTHE KEY\n")
	testAfterJudge = func(phys string) {
		if phys == skill {
			if err := os.Remove(skill); err != nil {
				t.Error(err)
			}
			if err := os.Symlink("../../../secrets/key.md", skill); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testAfterJudge = nil })
	r := Load([]Dir{{Path: filepath.Join(root, "repo/.claude"), Source: "project", Within: []string{filepath.Join(root, "repo")}}},
		Options{Admit: func(path string) error {
			if strings.Contains(path, "/secrets/") {
				return errDenied
			}
			return nil
		}})
	if len(r.Skills) != 0 {
		t.Errorf("loaded %+v", r.Skills)
	}
	want := []string{"skill file /ROOT/repo/.claude/skills/ok/SKILL.md is ignored: " + memory.ErrMoved.Error()}
	var probs []string
	for _, p := range r.Problems {
		probs = append(probs, strings.ReplaceAll(p, root, "/ROOT"))
	}
	if d := cmp.Diff(want, probs); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}
