//go:build linux

package nofollow

import "golang.org/x/sys/unix"

// openat2Works reports whether openat2 is available here.
func openat2Works() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return !noOpenat2.Load()
}

// setNoOpenat2 turns the one-call open off (or back on); false when this
// system has none.
func setNoOpenat2(off bool) bool { noOpenat2.Store(off); return true }
