//go:build unix && !linux

package nofollow

// openDirResolved has no one-call form here: OpenDir walks.
func openDirResolved(string) (int, bool) { return -1, false }
