//go:build unix

package nofollow

import (
	"io/fs"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// OpenDir opens the directory dir (absolute and clean) without following
// links, creating missing components (mode 0755) when create is set. The
// caller closes the descriptor, which serves only as the directory
// argument of *at calls (on Linux it is an O_PATH descriptor). Errors are
// *fs.PathError; a link on the way has cause ErrLink, and a missing
// directory without create wraps fs.ErrNotExist.
func OpenDir(dir string, create bool) (int, error) {
	if fd, ok := openDirResolved(dir); ok {
		return fd, nil
	}
	walks.Add(1)
	fd, err := Openat(unix.AT_FDCWD, "/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|dirOpenFlags, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	for _, c := range strings.Split(dir, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." { // never in a clean absolute path; refuse rather than guess
			unix.Close(fd)
			return -1, &fs.PathError{Op: "open", Path: dir, Err: unix.EINVAL}
		}
		next, err := Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|dirOpenFlags, 0)
		if err == unix.ENOENT && create {
			if merr := unix.Mkdirat(fd, c, 0o755); merr != nil && merr != unix.EEXIST {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: dir, Err: merr}
			}
			next, err = Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|dirOpenFlags, 0)
		}
		if err != nil {
			err = LinkCause(fd, c, err)
			unix.Close(fd)
			return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// walks counts the OpenDir calls that walked the path (for the tests).
var walks atomic.Int64

// LinkCause turns the error of an O_NOFOLLOW open of name in dirfd into
// ErrLink when name is a symbolic link; other errors are returned as
// they are.
func LinkCause(dirfd int, name string, err error) error {
	if err != unix.ELOOP && err != unix.ENOTDIR && err != unix.EMLINK {
		return err
	}
	if IsLink(dirfd, name) {
		return ErrLink
	}
	return err
}

// IsLink reports whether name in dirfd is a symbolic link.
func IsLink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// Openat is unix.Openat, retried when a signal interrupts it.
func Openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
