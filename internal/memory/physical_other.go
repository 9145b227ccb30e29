//go:build !unix

package memory

import "os"

// ReadPhysical reads the regular file phys, an absolute physical path
// (see [Physical]), of at most max bytes. Without openat and O_NOFOLLOW
// it opens phys plainly and checks that the file it opened is the one phys
// names now ([ErrMoved] otherwise); a link swapped in on the way and
// back again in between is not seen.
func ReadPhysical(phys string, max int64) ([]byte, error) {
	f, err := os.Open(phys)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if li, err := os.Lstat(phys); err != nil || !os.SameFile(fi, li) {
		return nil, ErrMoved
	}
	return readOpened(f, fi, max)
}
