//go:build !unix

package tools

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Without openat and O_NOFOLLOW the file tools open the checked path
// plainly: the path is still the one the check resolved, but a link
// swapped in on the way would be followed.

func readFileNoFollow(p string) ([]byte, error) { return os.ReadFile(p) }
func mkdirParentNoFollow(p string) error        { return os.MkdirAll(filepath.Dir(p), 0o755) }
func writeFileNoFollow(p string, data []byte, perm fs.FileMode) error {
	return os.WriteFile(p, data, perm)
}

// targetDir is a file's directory (see the unix version); here it only
// names the file.
type targetDir struct{ path string }

func openTargetDir(p string) (*targetDir, error)     { return &targetDir{path: p}, nil }
func (d *targetDir) close()                          {}
func (d *targetDir) stat() (fs.FileInfo, error)      { return os.Stat(d.path) }
func (d *targetDir) read(size int64) ([]byte, error) { return os.ReadFile(d.path) }
