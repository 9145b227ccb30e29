//go:build unix

package tools

import "syscall"

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

func (f grepFile) close() { syscall.Close(f.fd) }
