//go:build unix

package session

import (
	"os"
	"syscall"
)

// lockFile takes an advisory lock on f (shared or exclusive), waiting for
// it; it is released when f is closed. Instances of FileStore, in this
// process or others, on one directory serialise through it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
