//go:build linux

package sandbox

import "golang.org/x/sys/unix"

var nativeArch = &seccompArch{
	audit:        unix.AUDIT_ARCH_AARCH64,
	socket:       unix.SYS_SOCKET,
	ioctl:        unix.SYS_IOCTL,
	ioUringSetup: unix.SYS_IO_URING_SETUP,
	mounts: []uint32{unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
		unix.SYS_OPEN_TREE_ATTR, unix.SYS_SETNS},
}
