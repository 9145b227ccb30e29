package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decideIn builds a checker in mode with allow rules over a fresh
// working directory, and decides one call.
func decideIn(t *testing.T, mode Mode, allow []string, cwd, home string, tool string, in map[string]any) Decision {
	t.Helper()
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: allow}}}
	ck, err := New(Config{Mode: mode, Rules: rs, Dirs: []string{cwd}, Home: home, AllowBypass: true})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(in)
	return ck.Decide(context.Background(), Call{Tool: tool, Input: raw})
}

// TestProtectedInBypass: writes to protected paths are asked in every
// mode, bypassPermissions included, by the file tools and by Bash
// (redirections, the filesystem commands, and arguments of other writers),
// and no allow rule covers them.
func TestProtectedInBypass(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	for _, d := range []string{cwd + "/.git/hooks", cwd + "/.claude/worktrees", home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".git", filepath.Join(cwd, "g")); err != nil {
		t.Fatal(err)
	}
	asked := []struct {
		tool string
		in   map[string]any
	}{
		{"Write", map[string]any{"file_path": cwd + "/.git/config", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/g/hooks/pre-commit", "content": "x"}}, // through a link
		{"Edit", map[string]any{"file_path": cwd + "/.claude/settings.json", "old_string": "a", "new_string": "b"}},
		{"Edit", map[string]any{"file_path": cwd + "/.claude/commands/x.md", "old_string": "a", "new_string": "b"}},
		{"Write", map[string]any{"file_path": cwd + "/.vscode/tasks.json", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/.idea/workspace.xml", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/.husky/pre-commit", "content": "x"}},
		{"Write", map[string]any{"file_path": home + "/.bashrc", "content": "x"}},
		{"Write", map[string]any{"file_path": "~/.zshrc", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/.npmrc", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/.mcp.json", "content": "x"}},
		{"Write", map[string]any{"file_path": home + "/.ssh/authorized_keys", "content": "x"}},
		{"NotebookEdit", map[string]any{"notebook_path": cwd + "/.claude/n.ipynb", "new_source": "x"}},
		{"Bash", map[string]any{"command": "echo x >> ~/.bashrc"}},
		{"Bash", map[string]any{"command": "echo x > .git/hooks/pre-commit"}},
		{"Bash", map[string]any{"command": "cp evil .git/hooks/pre-commit"}},
		{"Bash", map[string]any{"command": "mv evil .husky/pre-commit"}},
		{"Bash", map[string]any{"command": "sed -i s/a/b/ .mcp.json"}},
		{"Bash", map[string]any{"command": "touch .claude/settings.local.json"}},
		{"Bash", map[string]any{"command": "echo x | tee -a " + home + "/.profile"}},
		{"Bash", map[string]any{"command": "chmod +x .git/hooks/pre-commit"}},
		{"Bash", map[string]any{"command": "ln -sf /tmp/x .git/hooks/pre-push"}},
		{"Bash", map[string]any{"command": "dd if=evil of=.git/config"}},
		{"Bash", map[string]any{"command": "install -m 755 evil g/hooks/post-checkout"}},
		{"Bash", map[string]any{"command": "cd .git && echo x > config"}},
	}
	for _, mode := range []Mode{ModeBypass, ModeAcceptEdits, ModeDefault} {
		for _, c := range asked {
			d := decideIn(t, mode, []string{"Edit", "Write", "Bash", "Bash(tee:*)", "Edit(/**)"}, cwd, home, c.tool, c.in)
			if d.Behavior != Ask {
				t.Errorf("%s: %s %v: %s (%s), want ask", mode, c.tool, c.in, d.Behavior, d.Message)
			}
		}
	}
	// Not protected: reads, .claude/worktrees, look-alike names.
	allowed := []struct {
		tool string
		in   map[string]any
	}{
		{"Write", map[string]any{"file_path": cwd + "/.claude/worktrees/w/f.go", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/.gitignore", "content": "x"}},
		{"Write", map[string]any{"file_path": cwd + "/my.git/x", "content": "x"}},
		{"Bash", map[string]any{"command": "cat .git/config"}},
		{"Bash", map[string]any{"command": "git status"}},
		{"Bash", map[string]any{"command": "echo x > notes.txt"}},
		{"Bash", map[string]any{"command": "cp a.go b.go"}},
	}
	for _, c := range allowed {
		d := decideIn(t, ModeBypass, nil, cwd, home, c.tool, c.in)
		if d.Behavior != Allow {
			t.Errorf("bypass: %s %v: %s (%s), want allow", c.tool, c.in, d.Behavior, d.Message)
		}
	}
}

// TestInsideMessages: a path inside the working directories is never
// said to be outside them, also when the working directory is named
// through a link (/tmp vs /private/tmp), or is an additional directory.
func TestInsideMessages(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	phys := filepath.Join(root, "private", "w")
	extra := filepath.Join(root, "extra")
	for _, d := range []string{phys + "/src", extra + "/lib"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(phys+"/src/a.go", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "private"), filepath.Join(root, "tmp")); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(root, "tmp", "w") // the same directory through a link
	for _, dirs := range [][]string{{phys, extra}, {alias, extra}} {
		// ln is allowed, so that the read is what the message is about.
		rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(ln:*)"}}}}
		ck, err := New(Config{Dirs: dirs, Home: root, Rules: rs})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{phys + "/src/a.go", alias + "/src/a.go", extra + "/lib"} {
			for _, c := range []struct{ tool, field string }{{"Read", "file_path"}, {"Grep", "path"}, {"Glob", "path"}} {
				in, _ := json.Marshal(map[string]string{c.field: p, "pattern": "x"})
				d := ck.Decide(context.Background(), Call{Tool: c.tool, Input: in})
				if d.Behavior != Allow {
					t.Errorf("dirs %v: %s %s: %s (%s), want allow", dirs, c.tool, p, d.Behavior, d.Message)
				}
			}
			in, _ := json.Marshal(map[string]string{"command": "ln -s a b && cat " + p})
			d := ck.Decide(context.Background(), Call{Tool: "Bash", Input: in})
			if d.Behavior == Allow || strings.Contains(d.Message, "outside") || !strings.Contains(d.Message, "cat") {
				t.Errorf("dirs %v: %q: %s %s; want an ask about cat that does not say the path is outside", dirs, p, d.Behavior, d.Message)
			}
		}
		// Bash reads of the other name of a working directory run.
		in, _ := json.Marshal(map[string]string{"command": "cat " + alias + "/src/a.go " + phys + "/src/a.go"})
		if d := ck.Decide(context.Background(), Call{Tool: "Bash", Input: in}); d.Behavior != Allow {
			t.Errorf("dirs %v: cat through both names: %s (%s), want allow", dirs, d.Behavior, d.Message)
		}
	}
	// Still outside: a link that lies outside, pointing in.
	ck, _ := New(Config{Mode: ModeAcceptEdits, Dirs: []string{phys}, Home: root})
	if err := os.Symlink(phys+"/src/a.go", filepath.Join(root, "outlink")); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(root, "outlink"), "content": "x"})
	if d := ck.Decide(context.Background(), Call{Tool: "Write", Input: in}); d.Behavior == Allow {
		t.Errorf("Write through a link outside the working directory was allowed")
	}
}
