//go:build unix

package memory

import "syscall"

// lexists reports whether path names something, without following a final
// link; unlike os.Lstat it allocates no FileInfo, which matters because
// every session looks for .git in each directory from its cwd up.
func lexists(path string) bool {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
