//go:build unix

package memory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentloop/agentloop/internal/nofollow"
	"golang.org/x/sys/unix"
)

// ReadPhysical reads the regular file phys, an absolute physical path
// (see [Physical]), of at most max bytes. It opens phys one component at
// a time from "/" with O_NOFOLLOW, so it never follows a link: if one
// stands on the path now (it was swapped in after phys was resolved and
// judged), the read fails with [ErrMoved]. A directory ([ErrIsDir]), a
// FIFO, device or socket ([ErrNotRegular], opened without blocking) and a
// file over max bytes (*[TooLargeError]) are not read.
func ReadPhysical(phys string, max int64) ([]byte, error) {
	if !filepath.IsAbs(phys) {
		return nil, &fs.PathError{Op: "open", Path: phys, Err: errors.New("not an absolute path")}
	}
	phys = filepath.Clean(phys)
	dfd, err := nofollow.OpenDir(filepath.Dir(phys), false)
	if err != nil {
		return nil, linkErr(err)
	}
	defer unix.Close(dfd)
	base := filepath.Base(phys)
	fd, err := nofollow.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, linkErr(&fs.PathError{Op: "open", Path: phys, Err: nofollow.LinkCause(dfd, base, err)})
	}
	f := os.NewFile(uintptr(fd), phys)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readOpened(f, fi, max)
}

// linkErr turns nofollow's report of a link on the way into ErrMoved.
func linkErr(err error) error {
	if errors.Is(err, nofollow.ErrLink) {
		return ErrMoved
	}
	return err
}
