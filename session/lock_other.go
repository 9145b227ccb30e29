//go:build !unix

package session

import "os"

// tryLockFile always succeeds where advisory file locks are not available:
// there, two Writers on one session are not kept apart.
func tryLockFile(f *os.File) (bool, error) { return true, nil }

// locksWork reports whether tryLockFile excludes other holders.
const locksWork = false

// unlockFile does nothing where advisory file locks are not available.
func unlockFile(f *os.File) error { return nil }
