package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// filterTree builds root/{work,home,abs} with a link work/link -> secrets
// and a checker with deny rules in every form.
func filterTree(t *testing.T, deny ...string) (*Checker, string, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	for _, d := range []string{"work/secrets/deep", "work/a/b", "work/sub", "home/x", "abs/in"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("secrets", filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "abs"), filepath.Join(cwd, "abslink")); err != nil {
		t.Fatal(err)
	}
	var rs RuleSet
	for _, r := range deny {
		v, err := ParseRule(strings.ReplaceAll(r, "$ROOT", root))
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Add(SourceCLI, Deny, v); err != nil {
			t.Fatal(err)
		}
	}
	ck, err := New(Config{Rules: rs, Dirs: []string{cwd}, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return ck, root, cwd
}

// TestReadDenied checks the read filter the search tools use, for every
// rule form and every way of naming the path.
func TestReadDenied(t *testing.T) {
	ck, root, cwd := filterTree(t, "Read(./secrets/**)", "Read(**/.env)", "Read(//$ROOT/abs/**)", "Read(~/x)", "Grep(*.log)")
	cases := []struct {
		tool, path string
		want       bool
	}{
		{"Read", cwd + "/secrets", true},
		{"Read", cwd + "/secrets/key", true},
		{"Read", cwd + "/secrets/deep/key", true},
		{"Grep", cwd + "/link/key", true},            // through a link
		{"Glob", cwd + "/sub/../secrets/key", true},  // through ..
		{"Grep", cwd + "/link/../secrets/key", true}, // .. after a link
		{"Read", cwd + "/.env", true},
		{"Glob", cwd + "/a/b/.env", true},
		{"Glob", root + "/other/.env", true}, // relative deny rules match anywhere
		{"Read", root + "/abs", true},
		{"Read", root + "/abs/in/f", true},
		{"Grep", cwd + "/abslink/in/f", true},
		{"Read", root + "/home/x", true},
		{"Read", root + "/home/x/y", true},
		{"Grep", cwd + "/a/b/x.log", true}, // a Grep rule binds Grep
		{"Read", cwd + "/a/b/x.log", false},
		{"Glob", cwd + "/a/b/x.log", false},
		{"Read", cwd + "/secretsx", false},
		{"Read", cwd + "/a/b/env", false},
		{"Read", cwd, false},
		{"Grep", root, false},
		{"Read", root + "/home", false},
		{"Read", "relative/path", true}, // cannot be judged
		{"Read", "", true},
	}
	type row struct {
		Tool, Path string
		Denied     bool
	}
	var got, want []row
	for _, c := range cases {
		got = append(got, row{c.tool, c.path, ck.ReadDenied(c.tool, c.path)})
		want = append(want, row{c.tool, c.path, c.want})
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadDenied (-want +got):\n%s", d)
	}
}

// TestReadDeniedAs: the literal form matches each name as given, with no
// file system access, so a link is only caught through its physical name.
func TestReadDeniedAs(t *testing.T) {
	ck, _, cwd := filterTree(t, "Read(./secrets/**)")
	cases := []struct {
		names []string
		want  bool
	}{
		{[]string{cwd + "/link/key"}, false}, // literal: the link is not followed
		{[]string{cwd + "/link/key", cwd + "/secrets/key"}, true},
		{[]string{cwd + "/pub/key"}, false},
		{[]string{"rel"}, true},
	}
	for _, c := range cases {
		if got := ck.ReadDeniedAs("Grep", c.names...); got != c.want {
			t.Errorf("ReadDeniedAs(%q) = %v, want %v", c.names, got, c.want)
		}
	}
	empty, _, _ := filterTree(t)
	if empty.HasReadDenyRules("Grep") || empty.ReadDeniedAs("Grep", cwd+"/secrets/key") {
		t.Error("a checker without deny rules denies")
	}
}

// TestSearchRootAllowedButFiltered: the checker allows a search of an
// ancestor of a denied directory (the tools filter), denies one of the
// denied directory itself, however named.
func TestSearchRootAllowedButFiltered(t *testing.T) {
	ck, _, cwd := filterTree(t, "Read(./secrets/**)")
	cases := []struct {
		tool string
		in   map[string]string
		want Behavior
	}{
		{"Grep", map[string]string{"pattern": "x"}, Allow},
		{"Grep", map[string]string{"pattern": "x", "path": "sub/.."}, Allow},
		{"Glob", map[string]string{"pattern": "**/*"}, Allow},
		{"Grep", map[string]string{"pattern": "x", "path": "link"}, Deny},
		{"Grep", map[string]string{"pattern": "x", "path": cwd + "/sub/../secrets"}, Deny},
		{"Glob", map[string]string{"pattern": "*", "path": "link"}, Deny},
		{"Glob", map[string]string{"pattern": "link/*"}, Allow}, // the walk drops what lies below
		{"Read", map[string]string{"file_path": cwd + "/link/key"}, Deny},
		{"Read", map[string]string{"file_path": cwd + "/sub/../secrets/key"}, Deny},
	}
	for _, c := range cases {
		in, _ := json.Marshal(c.in)
		d := ck.Decide(context.Background(), Call{Tool: c.tool, Input: in})
		if d.Behavior != c.want {
			t.Errorf("%s %v: %s (%s), want %s", c.tool, c.in, d.Behavior, d.Message, c.want)
		}
	}
}

// TestDecisionPath: the file tools' decisions carry the physical path
// judged; others carry none.
func TestDecisionPath(t *testing.T) {
	ck, root, cwd := filterTree(t)
	cases := []struct {
		tool string
		in   map[string]string
		want string
	}{
		{"Read", map[string]string{"file_path": cwd + "/link/deep/f"}, cwd + "/secrets/deep/f"},
		{"Write", map[string]string{"file_path": cwd + "/abslink/in/new"}, root + "/abs/in/new"},
		{"Edit", map[string]string{"file_path": cwd + "/sub/../a/f"}, cwd + "/a/f"},
		{"NotebookEdit", map[string]string{"notebook_path": cwd + "/link/n.ipynb"}, cwd + "/secrets/n.ipynb"},
		{"Grep", map[string]string{"pattern": "x", "path": cwd + "/link"}, ""},
		{"Bash", map[string]string{"command": "ls"}, ""},
	}
	for _, c := range cases {
		in, _ := json.Marshal(c.in)
		d := ck.Decide(context.Background(), Call{Tool: c.tool, Input: in})
		if d.Path != c.want {
			t.Errorf("%s %v: Path %q, want %q", c.tool, c.in, d.Path, c.want)
		}
		if p, ok := ck.FilePath(c.tool, in); p != c.want || ok != (c.want != "") {
			t.Errorf("FilePath(%s %v) = %q, %v; want %q", c.tool, c.in, p, ok, c.want)
		}
	}
}
