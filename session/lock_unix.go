//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive advisory lock (flock) on f without
// waiting. It returns false, nil when another open file holds it, in this
// process or another. The lock is released when f is closed, and by the
// kernel when the process dies.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}

// locksWork reports whether tryLockFile excludes other holders.
const locksWork = true

// unlockFile releases f's advisory lock and keeps f open.
func unlockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
