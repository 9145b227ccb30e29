//go:build unix

package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentloop/agentloop/internal/nofollow"
	"golang.org/x/sys/unix"
)

// The store reaches files one path component at a time with openat and
// O_NOFOLLOW, from "/" (package nofollow), so that no symbolic link is
// ever followed: a link on the way (a directory replaced by a link after
// the snapshot) or at the end makes the operation stop with nofollow.ErrLink.

// readState reads the state of the file at path without following links.
// A missing file, or a missing directory on the way, is a file that does
// not exist.
func readState(path string) (current, error) {
	dfd, err := nofollow.OpenDir(filepath.Dir(path), false)
	if errors.Is(err, fs.ErrNotExist) {
		return current{}, nil
	}
	if err != nil {
		return current{}, err
	}
	defer unix.Close(dfd)
	base := filepath.Base(path)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return current{}, nil
		}
		return current{}, fmt.Errorf("stat %s: %w", path, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return current{}, nofollow.ErrLink
	case unix.S_IFREG:
	default:
		return current{}, errNotRegular
	}
	if st.Size > MaxFileSize {
		return current{}, fmt.Errorf("%s is larger than %d bytes", path, MaxFileSize)
	}
	fd, err := nofollow.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return current{}, fmt.Errorf("opening %s: %w", path, nofollow.LinkCause(dfd, base, err))
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return current{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return current{}, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return current{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return current{}, fmt.Errorf("%s is larger than %d bytes", path, MaxFileSize)
	}
	return current{exists: true, mode: fi.Mode().Perm(), data: data}, nil
}

// restore makes the file at path hold data with mode, or removes it when
// exists is false, following no link: the new content is written to a
// temporary file in the same directory and renamed over the file (a link
// swapped in meanwhile is replaced, not followed).
func restore(path string, exists bool, data []byte, mode fs.FileMode) error {
	dfd, err := nofollow.OpenDir(filepath.Dir(path), exists)
	if !exists && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	base := filepath.Base(path)
	if !exists {
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				return nil
			}
			return fmt.Errorf("stat %s: %w", path, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return nofollow.ErrLink
		case unix.S_IFREG:
		default:
			return errNotRegular
		}
		if err := unix.Unlinkat(dfd, base, 0); err != nil && err != unix.ENOENT {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		return nil
	}
	tmp, fd, err := createTemp(dfd, base, mode)
	if err != nil {
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode.Perm()) // the umask narrowed the create mode
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new file next to base in dfd, exclusively.
func createTemp(dfd int, base string, mode fs.FileMode) (string, int, error) {
	for i := 0; ; i++ {
		name := fmt.Sprintf(".%s.rewind-%d-%d", base, os.Getpid(), i)
		if len(name) > 255 {
			name = fmt.Sprintf(".rewind-%d-%d", os.Getpid(), i)
		}
		fd, err := nofollow.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
		if err == unix.EEXIST && i < 100 {
			continue
		}
		if err != nil {
			return "", -1, err
		}
		return name, fd, nil
	}
}

// Supported reports whether the store works on this system.
const Supported = true
