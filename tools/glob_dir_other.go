//go:build !linux

package tools

import (
	"io/fs"
	"os"
)

// readWalkDir reads the entries of the directory at path; done does
// nothing here.
func readWalkDir(path string, keepOpen bool) (entries []fs.DirEntry, done func(), err error) {
	entries, err = os.ReadDir(path)
	return entries, func() {}, err
}
