package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrSessionBusy reports a session whose transcript another Writer holds
// (one that has not called [Writer.Release]): another process resumed the
// same session, or this one opened it twice. The second writer fails
// rather than interleave its entries with the first's; resume with
// ForkSession to continue in a new session instead, or try again once the
// first has ended or released it.
var ErrSessionBusy = errors.New("session is busy")

// sessionLock is the advisory lock a Writer holds on its transcript for
// its lifetime, or between Hold and Release: an exclusive flock on the file beside it named
// <transcript>.lock, which holds the holder's process id. The kernel
// releases it when the holder dies, so a crash never leaves a session
// locked; a lock file left behind by a crash is taken over by the next
// Writer. Where flock is not available (not Unix) it excludes nothing.
type sessionLock struct {
	f    *os.File
	path string
}

// lockPath returns the lock file of the transcript at path.
func lockPath(transcript string) string { return transcript + ".lock" }

// acquireLock takes the lock of the transcript at path without waiting.
// It fails with an error wrapping [ErrSessionBusy] when another Writer
// holds it; sessionID names the session in that error.
func acquireLock(path, sessionID string) (*sessionLock, error) {
	lp := lockPath(path)
	for range 10 {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("session: locking the transcript: %w", err)
		}
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("session: locking the transcript %s: %w", path, err)
		}
		if !ok {
			holder := lockHolder(f)
			f.Close()
			return nil, busyError(path, sessionID, holder)
		}
		// The previous holder removes the file while it still holds the
		// lock; if it did so after this open, the lock just taken is on a
		// file nobody else will find: open the new one.
		held, err1 := f.Stat()
		named, err2 := os.Stat(lp)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return &sessionLock{f: f, path: lp}, nil
		}
		f.Close()
		if err1 != nil {
			return nil, fmt.Errorf("session: locking the transcript: %w", err1)
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, fmt.Errorf("session: locking the transcript: %w", err2)
		}
	}
	return nil, fmt.Errorf("session: locking the transcript %s: its lock file keeps being replaced", path)
}

// lockHolder returns the process id written in a lock file, "" if none.
func lockHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid := strings.TrimSpace(string(b[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	return pid
}

// busyError is the error of a second Writer on a session.
func busyError(path, sessionID, pid string) error {
	if sessionID == "" {
		sessionID = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	holder := "another process"
	switch pid {
	case "":
	case strconv.Itoa(os.Getpid()):
		holder = "another Writer in this process"
	default:
		holder = "process " + pid
	}
	return fmt.Errorf("session: %w: session %s is being written by %s (%s); "+
		"resume it with ForkSession to continue in a new session, or try again when that one has ended",
		ErrSessionBusy, sessionID, holder, path)
}

// release removes the lock file, while still holding the lock and only if
// it is still this lock's file, and then releases the lock.
func (l *sessionLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	if held, err := l.f.Stat(); err == nil {
		if named, err := os.Stat(l.path); err == nil && os.SameFile(held, named) {
			os.Remove(l.path)
		}
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// unlock releases the lock and keeps its file, open and in place, so that
// relock can take it again cheaply (an idle Writer, see Writer.Release).
func (l *sessionLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	return unlockFile(l.f)
}

// relock takes an unlocked lock again without waiting: ok is false when
// another Writer holds it. When the lock file was replaced or removed
// meanwhile (its last holder removes it at Close), the lock is taken on
// the file now at its path, as acquireLock does.
func (l *sessionLock) relock(path, sessionID string) (*sessionLock, error) {
	ok, err := tryLockFile(l.f)
	if err != nil {
		return nil, fmt.Errorf("session: locking the transcript %s: %w", path, err)
	}
	if !ok {
		return nil, busyError(path, sessionID, lockHolder(l.f))
	}
	held, err1 := l.f.Stat()
	named, err2 := os.Stat(l.path)
	if err1 == nil && err2 == nil && os.SameFile(held, named) {
		if err := l.f.Truncate(0); err == nil {
			l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return l, nil
	}
	l.f.Close()
	l.f = nil
	return acquireLock(path, sessionID)
}

// tryLock takes the lock of the transcript at path if it is free; it
// returns nil, nil when another Writer holds it.
func tryLock(path string) (*sessionLock, error) {
	l, err := acquireLock(path, "")
	if errors.Is(err, ErrSessionBusy) {
		return nil, nil
	}
	return l, err
}
