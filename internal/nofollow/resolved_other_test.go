//go:build unix && !linux

package nofollow

func openat2Works() bool         { return false }
func setNoOpenat2(off bool) bool { return false }
