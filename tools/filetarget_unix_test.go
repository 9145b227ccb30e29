//go:build unix

package tools

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/internal/nofollow"
)

// readFileNoFollow is a targetDir's read of p, its size unknown.
func readFileNoFollow(p string) ([]byte, error) {
	d, err := openTargetDir(p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.read(-1)
}

// statNoFollow is a targetDir's stat of p.
func statNoFollow(p string) (fs.FileInfo, error) {
	d, err := openTargetDir(p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.stat()
}

// The file information a targetDir's stat gives is what os.Lstat gives,
// for every kind of file it can meet; a link is refused.
func TestTargetDirStatMatchesLstat(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := map[string]func(p string) error{
		"file":  func(p string) error { return os.WriteFile(p, []byte("twelve bytes"), 0o640) },
		"empty": func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"dir":   func(p string) error { return os.Mkdir(p, 0o750) },
		"fifo":  func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"socket": func(p string) error {
			l, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
			return err
		},
		"setuid": func(p string) error {
			if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
				return err
			}
			return os.Chmod(p, 0o755|fs.ModeSetuid|fs.ModeSetgid)
		},
		"sticky": func(p string) error {
			if err := os.Mkdir(p, 0o777); err != nil {
				return err
			}
			return os.Chmod(p, 0o777|fs.ModeDir|fs.ModeSticky)
		},
	}
	type view struct {
		Name    string
		Size    int64
		Mode    fs.FileMode
		IsDir   bool
		ModTime int64
	}
	see := func(fi fs.FileInfo) view {
		v := view{Name: fi.Name(), Mode: fi.Mode(), IsDir: fi.IsDir(), ModTime: fi.ModTime().UnixNano()}
		if fi.Mode().IsRegular() {
			v.Size = fi.Size()
		}
		return v
	}
	for name, make := range mk {
		p := filepath.Join(dir, name)
		if err := make(p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := statNoFollow(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := cmp.Diff(see(want), see(got)); d != "" {
			t.Errorf("%s: stat (-os.Lstat +targetDir):\n%s", name, d)
		}
	}
	// A character device, where the system has one.
	if want, err := os.Lstat("/dev/null"); err == nil {
		got, err := statNoFollow("/dev/null")
		if err != nil || got.Mode() != want.Mode() {
			t.Errorf("/dev/null: mode %v (%v), want %v", got.Mode(), err, want.Mode())
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "file"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := statNoFollow(link); !errors.Is(err, nofollow.ErrLink) {
		t.Errorf("stat of a link: %v, want %v", err, nofollow.ErrLink)
	}
	if _, err := statNoFollow(filepath.Join(dir, "missing")); !isNotExist(err) {
		t.Errorf("stat of a missing file: %v, want not exist", err)
	}
}

// A read gets the whole file whatever the size it is told: the right
// one, none, a stale smaller or larger one, or 0 (what procfs reports).
func TestTargetDirReadSizes(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 70000} {
		data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, hint := range []int64{int64(n), -1, 0, int64(n / 2), int64(n) + 1, int64(n) + 600, int64(n) * 3} {
			d, err := openTargetDir(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.read(hint)
			d.close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("size %d, told %d: got %d bytes (%v), want all %d", n, hint, len(got), err, n)
			}
		}
	}
	// procfs says 0 bytes and has more: read to the end (Linux only).
	if b, err := readFileNoFollow("/proc/self/status"); err == nil && !strings.Contains(string(b), "\nVmRSS:") {
		t.Errorf("/proc/self/status read short: %q", b)
	}
}

// A FIFO that takes the file's place after the stat does not hang the
// read (with no writer it reads as empty).
func TestTargetDirReadFIFO(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	d, err := openTargetDir(p)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	done := make(chan error, 1)
	go func() { _, err := d.read(10); done <- err }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO hung")
	}
}
