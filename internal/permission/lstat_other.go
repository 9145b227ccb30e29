//go:build !unix

package permission

import "os"

// isSymlink reports whether p names a symbolic link, without following
// it; the error is lstat's.
func isSymlink(p string) (bool, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return false, err
	}
	return fi.Mode()&os.ModeSymlink != 0, nil
}
