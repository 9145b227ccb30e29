//go:build linux

package sandbox

import "golang.org/x/sys/unix"

var nativeArch = &seccompArch{
	audit:        unix.AUDIT_ARCH_X86_64,
	x32:          true,
	socket:       unix.SYS_SOCKET,
	ioctl:        unix.SYS_IOCTL,
	ioUringSetup: unix.SYS_IO_URING_SETUP,
}
