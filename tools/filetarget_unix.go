//go:build unix

package tools

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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

// statNoFollow is os.Stat for a physical path: a link anywhere on it,
// the file included, is refused.
func statNoFollow(p string) (fs.FileInfo, error) {
	dfd, err := nofollow.OpenDir(filepath.Dir(p), false)
	if err != nil {
		return nil, err
	}
	unix.Close(dfd)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: errLinkOnPath}
	}
	return fi, nil
}

// readFileNoFollow is os.ReadFile for a physical path.
func readFileNoFollow(p string) ([]byte, error) {
	f, err := openNoFollow(p, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	buf := make([]byte, 0, size+512)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
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
