//go:build unix

package session

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an advisory lock (flock) on f, shared or exclusive,
// waiting for it until ctx is done; the lock is released when f is closed.
// Instances of FileStore on one directory, in this process or others,
// serialise through it.
func lockFile(ctx context.Context, f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	wait := 100 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}
