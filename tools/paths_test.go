package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

func TestReadResolvePath(t *testing.T) {
	dir := ftTempDir(t)
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "sub"), filepath.Join(real, "loop-free")); err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{Cwd: dir, Home: filepath.Join(dir, "home")}
	for _, tc := range []struct {
		in, want string
	}{
		{filepath.Join(dir, "link", "sub"), filepath.Join(real, "sub")},
		{filepath.Join(dir, "link", "new", "file.txt"), filepath.Join(real, "new", "file.txt")},
		{"link/../real/./sub//x", filepath.Join(real, "sub", "x")},
		{"link/loop-free/y", filepath.Join(real, "sub", "y")},
		{"~/notes.md", filepath.Join(dir, "home", "notes.md")},
		{"~", filepath.Join(dir, "home")},
		{"/no/such/dir/f", "/no/such/dir/f"},
	} {
		got, err := ResolvePath(env, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ResolvePath(env, ""); err == nil {
		t.Error("ResolvePath(\"\") should fail")
	}
	if _, err := ResolvePath(nil, "rel"); !errors.Is(err, ErrRelativePath) {
		t.Errorf("ResolvePath without cwd = %v, want ErrRelativePath", err)
	}
	if _, err := requireAbs(env, "rel/x"); !errors.Is(err, ErrRelativePath) {
		t.Errorf("requireAbs(relative) = %v", err)
	}
}

func TestGlobDisplayPath(t *testing.T) {
	for _, tc := range []struct{ cwd, p, want string }{
		{"/w", "/w/a/b.go", "a/b.go"},
		{"/w", "/w", "/w"},
		{"/w", "/other/x", "/other/x"},
		{"/w", "/wx/y", "/wx/y"},
		{"", "/a", "/a"},
		{"/", "/a", "a"},
	} {
		if got := displayPath(tc.cwd, tc.p); got != tc.want {
			t.Errorf("displayPath(%q, %q) = %q, want %q", tc.cwd, tc.p, got, tc.want)
		}
	}
}
