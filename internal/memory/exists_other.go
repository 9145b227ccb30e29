//go:build !unix

package memory

import "os"

// lexists reports whether path names something, without following a final
// link.
func lexists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
