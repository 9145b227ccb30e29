package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBlock: the block settings refuse file-tool writes and reads outside
// the working directories, and settings files, in every mode (bypass and
// allow rules included); they ask for Bash commands naming paths outside;
// exempt paths, session paths and working directories held inside an
// excluded path stay reachable.
func TestBlock(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(root, "work")
	out := filepath.Join(root, "outside")
	exempt := filepath.Join(root, "docs")
	session := filepath.Join(root, "results")
	inner := filepath.Join(cwd, "secret", "open") // an additional working directory inside the excluded path
	for _, d := range []string{cwd + "/sub", cwd + "/secret", inner, out, exempt, session} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(cwd, "secret"), filepath.Join(cwd, "tosecret")); err != nil {
		t.Fatal(err)
	}
	block := Block{Writes: true, Reads: true, Exempt: []string{exempt}, Exclude: []string{cwd + "/secret"},
		Session: []string{session}, Settings: []string{root + "/home/.claude/settings.json"}}
	allow := []string{"Read(/" + root + "/**)", "Edit(/" + root + "/**)", "Bash", "Grep", "Glob", "Write"}
	type tc struct {
		tool string
		in   map[string]any
		want Behavior
	}
	w := func(p string) map[string]any { return map[string]any{"file_path": p, "content": "x"} }
	r := func(p string) map[string]any { return map[string]any{"file_path": p} }
	sh := func(c string) map[string]any { return map[string]any{"command": c} }
	cases := []tc{
		{"Write", w(cwd + "/a.txt"), Allow},
		{"Write", w(out + "/a.txt"), Deny},
		{"Write", w(cwd + "/link/a.txt"), Deny}, // through a link
		{"Edit", map[string]any{"file_path": out + "/a.txt", "old_string": "a", "new_string": "b"}, Deny},
		{"NotebookEdit", map[string]any{"notebook_path": out + "/n.ipynb", "new_source": "x"}, Deny},
		{"MultiEdit", map[string]any{"file_path": out + "/a.txt", "edits": []any{}}, Deny},
		{"Write", w(cwd + "/.claude/settings.json"), Deny},
		{"Write", w(cwd + "/sub/.claude/settings.local.json"), Deny},
		{"Write", w(root + "/home/.claude/settings.json"), Deny},
		{"Write", w(cwd + "/secret/a"), Deny},   // excluded
		{"Write", w(cwd + "/tosecret/a"), Deny}, // excluded, through a link
		{"Write", w(inner + "/a"), Allow},       // a working directory inside the excluded path
		{"Write", w(session + "/r.txt"), Allow},
		{"Write", w(exempt + "/a"), Deny}, // exempt paths are for reads
		{"Read", r(out + "/f"), Deny},
		{"Read", r(cwd + "/link/f"), Deny},
		{"Read", r(cwd + "/f"), Allow},
		{"Read", r(exempt + "/f"), Allow},
		{"Read", r(session + "/f"), Allow},
		{"Read", r(cwd + "/secret/f"), Deny},
		{"Grep", map[string]any{"pattern": "x", "path": out}, Deny},
		{"Grep", map[string]any{"pattern": "x"}, Allow},
		{"Glob", map[string]any{"pattern": out + "/*"}, Deny},
		{"Glob", map[string]any{"pattern": "../outside/*"}, Deny},
		{"Glob", map[string]any{"pattern": "**/*.go"}, Allow},
		{"Bash", sh("cat " + out + "/f"), Ask},
		{"Bash", sh("cat < " + out + "/f"), Ask},
		{"Bash", sh("cd " + out + " && cat f"), Ask},
		{"Bash", sh("cat ../outside/f"), Ask},
		{"Bash", sh("python3 script.py --input=" + out + "/f"), Ask},
		{"Bash", sh("cat secret/f"), Ask},
		{"Bash", sh("cat $HOME/f"), Ask},
		{"Bash", sh("cat " + exempt + "/f"), Allow},
		{"Bash", sh("ls -la sub 2>/dev/null"), Allow},
		{"Bash", sh("go test ./... 2>&1"), Allow},
		{"Bash", sh("echo hi > " + out + "/x"), Ask},
	}
	for _, mode := range []Mode{ModeBypass, ModeDefault, ModeAcceptEdits} {
		rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: allow}}}
		ck, err := New(Config{Mode: mode, Rules: rs, Dirs: []string{cwd, inner}, Home: root + "/home", AllowBypass: true, Block: block})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			raw, _ := json.Marshal(c.in)
			call := Call{Tool: c.tool, Input: raw}
			d := ck.Decide(context.Background(), call)
			want := c.want
			if d.Behavior != want {
				t.Errorf("%s: %s %s = %s (%s), want %s", mode, c.tool, raw, d.Behavior, d.Message, want)
			}
			if want != Allow && !d.Blocked {
				t.Errorf("%s: %s %s: Blocked not set", mode, c.tool, raw)
			}
			if b := ck.Blocked(call); (b.Behavior != "") != (want != Allow) || b.Behavior != "" && b.Behavior != want {
				t.Errorf("%s: Blocked(%s %s) = %+v", mode, c.tool, raw, b)
			}
		}
	}
	// dontAsk turns the Bash ask into a denial; a deny rule still denies.
	ck, _ := New(Config{Mode: ModeDontAsk, Dirs: []string{cwd}, Block: block,
		Rules: RuleSet{Sources: []SourceRules{{Source: SourceCLI, Deny: []string{"Bash(rm:*)"}}}}})
	raw, _ := json.Marshal(sh("cat " + out + "/f"))
	if d := ck.Decide(context.Background(), Call{Tool: "Bash", Input: raw}); d.Behavior != Deny || !d.Blocked {
		t.Errorf("dontAsk: %+v", d)
	}
	raw, _ = json.Marshal(sh("rm " + out + "/f"))
	if d := ck.Decide(context.Background(), Call{Tool: "Bash", Input: raw}); d.Behavior != Deny || d.ReasonType != ReasonRule {
		t.Errorf("deny rule: %+v", d)
	}
	// The walk of Grep and Glob leaves out what lies outside or is
	// excluded; Read is judged by Decide alone.
	ck, _ = New(Config{Dirs: []string{cwd}, Block: block})
	for _, c := range []struct {
		tool, name string
		denied     bool
	}{
		{"Grep", cwd + "/a", false}, {"Grep", cwd + "/secret/a", true}, {"Glob", out + "/a", true},
		{"Glob", exempt + "/a", false}, {"Read", out + "/a", false},
	} {
		if got := ck.ReadDeniedAs(c.tool, c.name); got != c.denied {
			t.Errorf("ReadDeniedAs(%s, %s) = %v, want %v", c.tool, c.name, got, c.denied)
		}
	}
	// Without the switches nothing is fenced, whatever the lists say.
	ck, _ = New(Config{Mode: ModeBypass, Dirs: []string{cwd}, Block: Block{Exclude: []string{cwd + "/secret"}}})
	raw, _ = json.Marshal(w(out + "/a"))
	if d := ck.Decide(context.Background(), Call{Tool: "Write", Input: raw}); d.Behavior != Allow {
		t.Errorf("no switches: %+v", d)
	}
}
