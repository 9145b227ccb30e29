//go:build unix

package nofollow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenDir(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "there"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		dir    string
		create bool
		want   error // nil: opened
	}{
		{"plain", filepath.Join(root, "real", "sub"), false, nil},
		{"link on the way", filepath.Join(root, "link", "x"), false, ErrLink},
		{"link on the way to a directory", filepath.Join(root, "link", "there"), false, ErrLink},
		{"link at the end", filepath.Join(root, "link"), false, ErrLink},
		{"link on the way, create", filepath.Join(root, "link", "new"), true, ErrLink},
		{"missing", filepath.Join(root, "nope", "x"), false, fs.ErrNotExist},
		{"missing, create", filepath.Join(root, "made", "here"), true, nil},
		{"dot-dot", root + "/real/../real", false, unix.EINVAL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			walked := walks.Load()
			fd, err := OpenDir(c.dir, c.create)
			if c.name == "plain" && openat2Works() && walks.Load() != walked {
				t.Error("a plain directory was opened by walking its path, not in one call")
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("OpenDir(%s) = %v", c.dir, err)
				}
				unix.Close(fd)
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("OpenDir(%s) = %v, want %v", c.dir, err, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("create followed the link and made a directory outside")
	}
}

func TestLinkCause(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dfd, err := OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	_, err = Openat(dfd, "l", unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if got := LinkCause(dfd, "l", err); got != ErrLink {
		t.Errorf("LinkCause on a link = %v", got)
	}
	if got := LinkCause(dfd, "f", unix.EACCES); got != unix.EACCES {
		t.Errorf("LinkCause passes other errors through: %v", got)
	}
	if !IsLink(dfd, "l") || IsLink(dfd, "f") {
		t.Error("IsLink")
	}
}

// TestOpenDirWalkOnly: OpenDir gives the same answers with the one-call
// open unavailable (an older kernel), by walking.
func TestOpenDirWalkOnly(t *testing.T) {
	if !setNoOpenat2(true) {
		t.Skip("OpenDir always walks here")
	}
	t.Cleanup(func() { setNoOpenat2(false) })
	TestOpenDir(t)
}

// BenchmarkOpenDir opens a directory six components deep, in one call and
// by walking.
func BenchmarkOpenDir(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "a", "b", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, walk := range []bool{false, true} {
		name := "one call"
		if walk {
			name = "walk"
			if !setNoOpenat2(true) {
				b.Skip("always walks here")
			}
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				fd, err := OpenDir(dir, false)
				if err != nil {
					b.Fatal(err)
				}
				unix.Close(fd)
			}
		})
	}
	setNoOpenat2(false)
}

// TestNoLinks and LinkFree on one tree. NoLinks: true only for an
// existing path reached without a link; a link anywhere, a missing file,
// or no openat2, and it cannot tell. LinkFree: true for a path whose walk
// meets no link, whether it ends at the file or at a missing name; false
// wherever a link comes first, the path is relative, or there is no
// openat2.
func TestNoLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "dir", "f")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"ldir":    filepath.Join(root, "dir"),
		"lf":      file,
		"dangles": filepath.Join(root, "nowhere"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	works := openat2Works()
	cases := []struct {
		path              string
		noLinks, linkFree bool
	}{
		{file, works, works},
		{filepath.Join(root, "dir"), works, works},
		{filepath.Join(root, "missing"), false, works},
		{filepath.Join(root, "missing", "deeper", "still"), false, works},
		{filepath.Join(root, "dir", "f", "under-a-file"), false, works},
		{filepath.Join(root, "ldir", "f"), false, false},
		{filepath.Join(root, "ldir", "missing"), false, false},
		{filepath.Join(root, "lf"), false, false},
		{filepath.Join(root, "dangles"), false, false},
		{filepath.Join(root, "dangles", "x"), false, false},
		{"dir/f", false, false},
	}
	for _, c := range cases {
		if got := NoLinks(c.path); got != c.noLinks {
			t.Errorf("NoLinks(%s) = %v, want %v", c.path, got, c.noLinks)
		}
		if got := LinkFree(c.path); got != c.linkFree {
			t.Errorf("LinkFree(%s) = %v, want %v", c.path, got, c.linkFree)
		}
	}
	if !setNoOpenat2(true) {
		return
	}
	defer setNoOpenat2(false)
	for _, c := range cases {
		if NoLinks(c.path) || LinkFree(c.path) {
			t.Errorf("NoLinks or LinkFree(%s) without openat2 = true, want false", c.path)
		}
	}
}
