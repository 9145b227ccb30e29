package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/tool"
)

// swapTree is root/{work,out}: work/real/f.txt, work/other/f.txt,
// out/f.txt, and the link work/l -> real.
type swapTree struct {
	root, cwd, out string
	ck             *permission.Checker
}

func newSwapTree(t *testing.T) *swapTree {
	t.Helper()
	root := ftTempDir(t)
	s := &swapTree{root: root, cwd: filepath.Join(root, "work"), out: filepath.Join(root, "out")}
	ftWriteFile(t, s.cwd, "real/f.txt", "real\n")
	ftWriteFile(t, s.cwd, "other/f.txt", "other\n")
	ftWriteFile(t, s.out, "f.txt", "outside\n")
	if err := os.Symlink("real", filepath.Join(s.cwd, "l")); err != nil {
		t.Fatal(err)
	}
	ck, err := permission.New(permission.Config{Mode: permission.ModeAcceptEdits, Dirs: []string{s.cwd}, Home: root})
	if err != nil {
		t.Fatal(err)
	}
	s.ck = ck
	return s
}

// check decides a call and returns an Env whose CheckedPath hands the
// decision's path to the tool, as the session does.
func (s *swapTree) check(t *testing.T, toolName string, in map[string]any) *tool.Env {
	t.Helper()
	raw, _ := json.Marshal(in)
	d := s.ck.Decide(context.Background(), permission.Call{Tool: toolName, Input: raw})
	if d.Behavior != permission.Allow || d.Path == "" {
		t.Fatalf("%s %v: %s (%s), path %q; want allow with a path", toolName, in, d.Behavior, d.Message, d.Path)
	}
	return &tool.Env{Cwd: s.cwd, Home: s.root, State: &tool.State{},
		CheckedPath: func(id string) (string, bool) { return d.Path, id == "toolu_test" }}
}

// relink points the link name at target, as a background command would
// between the check and the run.
func relink(t *testing.T, name, target string) {
	t.Helper()
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// replaceWithLink moves the directory or file at name away and puts a
// link to target in its place.
func replaceWithLink(t *testing.T, name, target string) {
	t.Helper()
	if err := os.Rename(name, name+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestCheckedPathSwaps: a link swapped between the permission check and
// the run never takes a file tool elsewhere. When the link the model named
// is re-pointed, the tool works on the file that was checked; when a link
// replaces a directory or the file on the checked path, the call fails and
// nothing is touched.
func TestCheckedPathSwaps(t *testing.T) {
	type swap func(s *swapTree)
	writeIn := func(s *swapTree) (string, map[string]any) {
		return "Write", map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt"), "content": "NEW\n"}
	}
	editIn := func(s *swapTree) (string, map[string]any) {
		return "Edit", map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt"), "old_string": "", "new_string": "NEW\n"}
	}
	cases := []struct {
		name    string
		call    func(s *swapTree) (string, map[string]any)
		swap    func(t *testing.T, s *swapTree)
		wantErr bool
		// the file that must hold NEW afterwards ("" for none)
		written func(s *swapTree) string
	}{
		{"Write, named link re-pointed", writeIn,
			func(t *testing.T, s *swapTree) { relink(t, filepath.Join(s.cwd, "l"), s.out) }, false,
			func(s *swapTree) string { return filepath.Join(s.cwd, "real", "f.txt") }},
		{"Write, checked directory replaced by a link", writeIn,
			func(t *testing.T, s *swapTree) { replaceWithLink(t, filepath.Join(s.cwd, "real"), s.out) }, true, nil},
		{"Write, checked file replaced by a link", writeIn,
			func(t *testing.T, s *swapTree) {
				replaceWithLink(t, filepath.Join(s.cwd, "real", "f.txt"), filepath.Join(s.out, "f.txt"))
			}, true, nil},
		{"Write, new file, parent replaced by a link", func(s *swapTree) (string, map[string]any) {
			return "Write", map[string]any{"file_path": filepath.Join(s.cwd, "l", "new", "g.txt"), "content": "NEW\n"}
		}, func(t *testing.T, s *swapTree) { replaceWithLink(t, filepath.Join(s.cwd, "real"), s.out) }, true, nil},
		{"Edit, named link re-pointed", func(s *swapTree) (string, map[string]any) {
			return "Edit", map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt"), "old_string": "real", "new_string": "NEW"}
		}, func(t *testing.T, s *swapTree) { relink(t, filepath.Join(s.cwd, "l"), s.out) }, false,
			func(s *swapTree) string { return filepath.Join(s.cwd, "real", "f.txt") }},
		{"Edit create, checked directory replaced by a link", func(s *swapTree) (string, map[string]any) {
			_, in := editIn(s)
			in["file_path"] = filepath.Join(s.cwd, "l", "created.txt")
			return "Edit", in
		}, func(t *testing.T, s *swapTree) { replaceWithLink(t, filepath.Join(s.cwd, "real"), s.out) }, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSwapTree(t)
			name, in := c.call(s)
			env := s.check(t, name, in)
			c.swap(t, s)
			tl := Write()
			if name == "Edit" {
				tl = Edit()
			}
			r := ftRun(t, tl, env, in)
			if r.IsError != c.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", r.IsError, c.wantErr, r.Text())
			}
			if c.wantErr && !strings.Contains(r.Text(), "symbolic link") {
				t.Errorf("the refusal does not say why: %s", r.Text())
			}
			for _, p := range []string{filepath.Join(s.out, "f.txt"), filepath.Join(s.out, "created.txt"), filepath.Join(s.out, "new", "g.txt")} {
				if got := readString(t, p); strings.Contains(got, "NEW") {
					t.Errorf("the swap took the tool outside: %s now holds %q", p, got)
				}
			}
			if c.written != nil {
				if got := readString(t, c.written(s)); !strings.Contains(got, "NEW") {
					t.Errorf("the checked file %s holds %q, want the new content", c.written(s), got)
				}
			}
		})
	}
}

// TestCheckedPathRead: Read reads the checked file, and refuses when a
// link has replaced a directory on its path.
func TestCheckedPathRead(t *testing.T) {
	s := newSwapTree(t)
	in := map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt")}
	env := s.check(t, "Read", in)
	relink(t, filepath.Join(s.cwd, "l"), s.out)
	r := ftRun(t, Read(), env, in)
	if r.IsError || !strings.Contains(r.Text(), "real") || strings.Contains(r.Text(), "outside") {
		t.Errorf("Read after the link was re-pointed: %s; want the checked file", r.Text())
	}

	s = newSwapTree(t)
	in = map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt")}
	env = s.check(t, "Read", in)
	replaceWithLink(t, filepath.Join(s.cwd, "real"), s.out)
	r = ftRun(t, Read(), env, in)
	if !r.IsError || strings.Contains(r.Text(), "outside") {
		t.Errorf("Read after a link replaced the checked directory: %s; want a refusal", r.Text())
	}
}

// TestFileToolsWithoutCheck: without a checked path the tools resolve the
// path themselves and still work through links, dangling ones included.
func TestFileToolsWithoutCheck(t *testing.T) {
	s := newSwapTree(t)
	env := &tool.Env{Cwd: s.cwd, Home: s.root, State: &tool.State{}}
	if r := ftRun(t, Write(), env, map[string]any{"file_path": filepath.Join(s.cwd, "l", "f.txt"), "content": "viaLink\n"}); r.IsError {
		t.Fatalf("Write through a link: %s", r.Text())
	}
	if got := readString(t, filepath.Join(s.cwd, "real", "f.txt")); got != "viaLink\n" {
		t.Errorf("real/f.txt = %q", got)
	}
	if err := os.Symlink("real/dangling.txt", filepath.Join(s.cwd, "d")); err != nil {
		t.Fatal(err)
	}
	if r := ftRun(t, Write(), env, map[string]any{"file_path": filepath.Join(s.cwd, "d"), "content": "made\n"}); r.IsError {
		t.Fatalf("Write through a dangling link: %s", r.Text())
	}
	if got := readString(t, filepath.Join(s.cwd, "real", "dangling.txt")); got != "made\n" {
		t.Errorf("real/dangling.txt = %q", got)
	}
	if r := ftRun(t, Read(), env, map[string]any{"file_path": filepath.Join(s.cwd, "d")}); r.IsError || !strings.Contains(r.Text(), "made") {
		t.Errorf("Read through a link: %s", r.Text())
	}
	if r := ftRun(t, Write(), env, map[string]any{"file_path": filepath.Join(s.cwd, "x", "y", "z.txt"), "content": "deep\n"}); r.IsError {
		t.Errorf("Write creating directories: %s", r.Text())
	}
}
