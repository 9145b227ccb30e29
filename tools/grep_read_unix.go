//go:build unix

package tools

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// grepFile is a file open for reading by a search. On Unix it is a bare
// descriptor: the os package's files register with the runtime's poller,
// which costs system calls for nothing on regular files.
type grepFile struct{ fd int }

func openGrepFile(path string) (grepFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return grepFile{fd}, err
		}
	}
}

// read reads into p; 0 bytes and no error mean the end of the file.
func (f grepFile) read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}

// stat returns the size of the file and its modification time in
// milliseconds since the epoch.
func (f grepFile) stat() (size, mtimeMilli int64, err error) {
	var st unix.Stat_t // x/sys names the time fields alike on every unix
	for {
		err := unix.Fstat(f.fd, &st)
		if err != unix.EINTR {
			return st.Size, int64(st.Mtim.Sec)*1000 + int64(st.Mtim.Nsec)/1e6, err
		}
	}
}

// grepMapMin is the size from which a file is mapped into memory rather
// than read: a search then touches only the pages it looks at (a
// files_with_matches search stops at the first match), and nothing is
// copied or cleared. Below it, reading into a reused buffer is cheaper.
const grepMapMin = 1 << 20

// mmap maps the first size bytes of the file, read-only. Searching the
// mapping must go through grepGuardFault, as the file may shrink.
func (f grepFile) mmap(size int64) ([]byte, error) {
	return syscall.Mmap(f.fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// grepUnmap releases a mapping made by mmap.
func grepUnmap(b []byte) { _ = syscall.Munmap(b) }

func (f grepFile) close() { syscall.Close(f.fd) }

// grepLoadPath returns the contents of the file at the physical path p,
// following no link (see openNoFollow): mapped when it has grepMapMin
// bytes or more, and then release unmaps it; release is never nil.
func grepLoadPath(p string) (data []byte, release func(), err error) {
	f, err := openNoFollow(p, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, func() {}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, func() {}, err
	}
	if size := fi.Size(); size >= grepMapMin && int64(int(size)) == size {
		if b, err := (grepFile{int(f.Fd())}).mmap(size); err == nil {
			return b, func() { grepUnmap(b) }, nil
		}
	}
	data, err = io.ReadAll(f)
	return data, func() {}, err
}
