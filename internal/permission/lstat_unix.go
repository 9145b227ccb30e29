//go:build unix

package permission

import "syscall"

// isSymlink reports whether p names a symbolic link, without following
// it; the error is lstat's. It is os.Lstat without the FileInfo the path
// resolution of every permission check would allocate and drop.
func isSymlink(p string) (bool, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(p, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		return st.Mode&syscall.S_IFMT == syscall.S_IFLNK, nil
	}
}
