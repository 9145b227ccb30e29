//go:build unix

package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentloop/agentloop/internal/nofollow"
	"golang.org/x/sys/unix"
)

// The file tools open the checked path one component at a time with
// O_NOFOLLOW (openat from the directory before; package nofollow), so no
// symbolic link is followed on the way: if one was swapped in after the
// path was resolved, the open fails instead of reaching another file.

// openNoFollow opens the file at p (absolute and clean) with flags,
// following no link on the way or at the end.
func openNoFollow(p string, flags int, perm fs.FileMode) (*os.File, error) {
	dfd, err := nofollow.OpenDir(filepath.Dir(p), false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	base := filepath.Base(p)
	fd, err := nofollow.Openat(dfd, base, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: nofollow.LinkCause(dfd, base, err)}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// targetDir is the directory of a file, reached once without following a
// link, so that the file's metadata and its contents come from that one
// walk: a stat and a read of the same file cost one walk, not two, and a
// link swapped in on the way after the stat cannot send the read
// elsewhere. It holds a descriptor until close.
type targetDir struct {
	fd   int
	base string // the file's name in the directory
	path string // the file's path, for errors
}

// openTargetDir opens the directory of p (absolute and clean).
func openTargetDir(p string) (*targetDir, error) {
	fd, err := nofollow.OpenDir(filepath.Dir(p), false)
	if err != nil {
		return nil, err
	}
	return &targetDir{fd: fd, base: filepath.Base(p), path: p}, nil
}

// close releases the directory.
func (d *targetDir) close() { unix.Close(d.fd) }

// stat is os.Lstat of the file; a link is refused.
func (d *targetDir) stat() (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, d.base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: d.path, Err: err}
		}
		break
	}
	info := &statInfo{name: d.base, st: st}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "stat", Path: d.path, Err: nofollow.ErrLink}
	}
	return info, nil
}

// read returns the file's contents. size is what a stat said of it, a
// hint for the buffer (-1: unknown): a short read that brings the bytes
// read to a positive size is taken for the end of the file, saving the
// read that would return 0 (procfs, which says 0, is read until a read
// returns 0); a file that changed since is read to its end.
func (d *targetDir) read(size int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO swapped in since the stat must not hang the
	// open; on a regular file it changes nothing.
	fd, err := nofollow.Openat(d.fd, d.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: nofollow.LinkCause(d.fd, d.base, err)}
	}
	defer unix.Close(fd)
	if size < 0 {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			size = st.Size
		}
	}
	// One byte past the size the stat gave: a file that grew since fills
	// it and is read on, one that did not ends the first read short.
	buf := make([]byte, 0, max(size, 0)+1)
	for {
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: d.path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || n < want && int64(len(buf)) == size {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// statInfo is the fs.FileInfo of a stat made with fstatat or lstat, as
// os.Lstat would give it (the file tools, the walk of Glob and Grep).
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

// Mode converts the file's type and permission bits as package os does.
func (s *statInfo) Mode() fs.FileMode {
	m := uint32(s.st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// writeFileNoFollow is os.WriteFile for a physical path.
func writeFileNoFollow(p string, data []byte, perm fs.FileMode) error {
	f, err := openNoFollow(p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirParentNoFollow is os.MkdirAll of p's directory, following no link.
func mkdirParentNoFollow(p string) error {
	fd, err := nofollow.OpenDir(filepath.Dir(p), true)
	if err != nil {
		return err
	}
	return errors.Join(unix.Close(fd))
}
