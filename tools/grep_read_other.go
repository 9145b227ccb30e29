//go:build !unix

package tools

import (
	"errors"
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

// stat returns the size of the file and its modification time in
// milliseconds since the epoch.
func (f grepFile) stat() (size, mtimeMilli int64, err error) {
	fi, err := f.f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixMilli(), nil
}

// Files are never mapped here: grepMapMin is out of reach.
const grepMapMin = 1 << 62

func (f grepFile) mmap(int64) ([]byte, error) {
	return nil, errors.New("mapping files is not supported")
}

func grepUnmap([]byte) {}

func (f grepFile) close() { f.f.Close() }

// grepLoadPath returns the contents of the file at p; release is a no-op.
func grepLoadPath(p string) (data []byte, release func(), err error) {
	data, err = readFileNoFollow(p)
	return data, func() {}, err
}
