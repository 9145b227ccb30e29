//go:build !linux

package nofollow

// openDirResolved has no one-call form here: OpenDir walks.
func openDirResolved(string) (int, bool) { return -1, false }

// NoLinks cannot tell here: false (see the Linux version).
func NoLinks(string) bool { return false }

// LinkFree cannot tell here: false (see the Linux version).
func LinkFree(string) bool { return false }
