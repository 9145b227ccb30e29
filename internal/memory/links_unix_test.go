//go:build unix

package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadPhysical: the read never follows a link — one standing on the
// path when it is opened (swapped in after the path was judged) fails it
// — and reads only regular files, without blocking on a FIFO.
func TestReadPhysical(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	linkTree(t, root, map[string]string{"real/f.md": "TEXT", "secrets/key": "KEY", "big": strings.Repeat("x", 11)},
		map[string]string{"dirlink": "real", "filelink": "secrets/key"})
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, tc := range []struct {
		name, path string
		want       string
		err        error
	}{
		{"plain", "real/f.md", "TEXT", nil},
		{"link on the way", "dirlink/f.md", "", ErrMoved},
		{"link at the end", "filelink", "", ErrMoved},
		{"directory", "real", "", ErrIsDir},
		{"FIFO", "fifo", "", ErrNotRegular},
		{"missing", "real/none.md", "", os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = ReadPhysical(filepath.Join(root, tc.path), 10); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ReadPhysical blocked")
			}
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
		})
	}
	var big *TooLargeError
	if _, err := ReadPhysical(filepath.Join(root, "big"), 10); !errors.As(err, &big) {
		t.Errorf("an 11-byte file with a limit of 10: err = %v", err)
	}
}
