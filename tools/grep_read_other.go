//go:build !unix

package tools

import (
	"io"
	"os"
)

// grepFile is a file open for reading by a search.
type grepFile struct{ f *os.File }

func openGrepFile(path string) (grepFile, error) {
	f, err := os.Open(path)
	return grepFile{f}, err
}

// read reads into p; 0 bytes and no error mean the end of the file.
func (f grepFile) read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (f grepFile) close() { f.f.Close() }
