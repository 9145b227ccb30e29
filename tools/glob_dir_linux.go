//go:build linux

package tools

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux the walk reads directories with getdents64 itself: the os
// package's ReadDir sorts the entries and allocates for each, which a walk
// does not need. When asked, it keeps the directory open while its entries
// are handled, so that their Info is a stat relative to the directory
// (fstatat) rather than by the full path, which the kernel must resolve one
// component at a time.

var dirBufPool = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// linuxDir is an open directory whose entries are being handled.
type linuxDir struct {
	path string
	fd   int // -1 once closed
}

type linuxDirEntry struct {
	dir  *linuxDir
	name string
	typ  fs.FileMode
}

func (e *linuxDirEntry) Name() string      { return e.name }
func (e *linuxDirEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *linuxDirEntry) Type() fs.FileMode { return e.typ }

// Info stats the entry without following a symbolic link: relative to its
// directory while that is open, by path after.
func (e *linuxDirEntry) Info() (fs.FileInfo, error) {
	fi := &statInfo{name: e.name}
	var err error
	for {
		if e.dir.fd >= 0 {
			err = unix.Fstatat(e.dir.fd, e.name, &fi.st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(e.dir.path+string(filepath.Separator)+e.name, &fi.st)
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(e.dir.path, e.name), Err: err}
	}
	return fi, nil
}

// Values of a getdents64 record's d_type.
const (
	dtUnknown = 0
	dtFIFO    = 1
	dtChr     = 2
	dtDir     = 4
	dtBlk     = 6
	dtReg     = 8
	dtLnk     = 10
	dtSock    = 12
)

// readWalkDir reads the entries of the directory at path, in no particular
// order. With keepOpen, the directory stays open until done is called, and
// the entries' Info is relative to it until then; it must not be called
// after done from another goroutine than the one that calls done.
func readWalkDir(path string, keepOpen bool) (entries []fs.DirEntry, done func(), err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	dir := &linuxDir{path: path, fd: fd}
	done = func() {
		if dir.fd >= 0 {
			syscall.Close(dir.fd)
			dir.fd = -1
		}
	}
	bp := dirBufPool.Get().(*[]byte)
	defer dirBufPool.Put(bp)
	buf := *bp
	var all []linuxDirEntry
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			done()
			return nil, nil, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			break
		}
		for rec := buf[:n]; len(rec) >= 19; {
			// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen
			// (2), d_type (1), then the name, ended by a NUL.
			reclen := int(binary.NativeEndian.Uint16(rec[16:]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			name := rec[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := rec[18]
			rec = rec[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			all = append(all, linuxDirEntry{dir: dir, name: string(name), typ: direntType(typ)})
			if typ == dtUnknown {
				e := &all[len(all)-1]
				fi, err := e.Info()
				if err != nil {
					all = all[:len(all)-1] // gone since
					continue
				}
				e.typ = fi.Mode().Type()
			}
		}
	}
	if !keepOpen {
		done()
	}
	entries = make([]fs.DirEntry, len(all))
	for i := range all {
		entries[i] = &all[i]
	}
	return entries, done, nil
}

func direntType(t byte) fs.FileMode {
	switch t {
	case dtDir:
		return fs.ModeDir
	case dtReg:
		return 0
	case dtLnk:
		return fs.ModeSymlink
	case dtFIFO:
		return fs.ModeNamedPipe
	case dtSock:
		return fs.ModeSocket
	case dtChr:
		return fs.ModeDevice | fs.ModeCharDevice
	case dtBlk:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
