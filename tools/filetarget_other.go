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

func statNoFollow(p string) (fs.FileInfo, error) { return os.Stat(p) }
func readFileNoFollow(p string) ([]byte, error)  { return os.ReadFile(p) }
func mkdirParentNoFollow(p string) error         { return os.MkdirAll(filepath.Dir(p), 0o755) }
func writeFileNoFollow(p string, data []byte, perm fs.FileMode) error {
	return os.WriteFile(p, data, perm)
}
