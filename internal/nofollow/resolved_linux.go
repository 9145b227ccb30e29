//go:build linux

package nofollow

import (
	"errors"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 turned out to be missing or unusable (a
// kernel before 5.6, a seccomp filter that refuses it, a kernel that does
// not take the struct's size): OpenDir walks from then on.
var noOpenat2 atomic.Bool

// openDirResolved opens dir in one openat2 call that the kernel fails if
// any component is a symbolic link (RESOLVE_NO_SYMLINKS): what OpenDir's
// walk promises, without a system call per component. It reports false
// whenever it did not open dir, for the walk to do it and name the cause
// (a link on the way, a missing directory to create, a dot-dot).
func openDirResolved(dir string) (int, bool) {
	if noOpenat2.Load() || !strings.HasPrefix(dir, "/") || strings.Contains(dir+"/", "/../") {
		return -1, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | dirOpenFlags,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, dir, &how)
		switch err {
		case nil:
			return fd, true
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ENOSYS, unix.EPERM, unix.E2BIG:
			noOpenat2.Store(true)
		}
		return -1, false
	}
}

// NoLinks reports whether path, absolute and clean, names an existing file
// that is reached without any symbolic link (its own name included),
// which the kernel checks in one openat2 call. False means it could not
// tell: a component is a link, is missing or cannot be searched, or the
// system has no openat2. It opens nothing but an O_PATH descriptor, which
// it closes.
func NoLinks(path string) bool {
	return openNoLinks(path) == nil
}

// LinkFree reports whether the kernel, walking path (absolute and clean),
// meets no symbolic link before the walk ends: NoLinks, or a component
// that is missing (ENOENT) or not a directory (ENOTDIR) with none met
// before it. The walk goes a component at a time from the root and fails
// with ELOOP at the first link, so either error proves that what exists
// of path holds no link, and a path that does not exist has no link in
// the part that does not; its physical form is itself. One system call.
// False means it could not tell (a link, a directory that cannot be
// searched, no openat2).
func LinkFree(path string) bool {
	switch openNoLinks(path) {
	case nil, unix.ENOENT, unix.ENOTDIR:
		return true
	}
	return false
}

// errNoOpenat2 is openNoLinks's answer where it cannot ask the kernel.
var errNoOpenat2 = errors.New("nofollow: openat2 unavailable")

// openNoLinks opens path as an O_PATH descriptor that the kernel refuses
// to reach through a link (RESOLVE_NO_SYMLINKS), closes it, and returns
// the call's error.
func openNoLinks(path string) error {
	if noOpenat2.Load() || !strings.HasPrefix(path, "/") {
		return errNoOpenat2
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
		switch err {
		case nil:
			unix.Close(fd)
			return nil
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ENOSYS, unix.EPERM, unix.E2BIG:
			noOpenat2.Store(true)
			return errNoOpenat2
		}
		return err
	}
}
