//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHelperProcess is not a test: run by helperErrno as a child (with
// SANDBOX_TEST_HELPER set), it makes one system call and prints
// "errno=NAME" ("errno=ok" when the call succeeded). No shell tool is
// needed, so the check works on a minimal system.
func TestHelperProcess(t *testing.T) {
	what := os.Getenv("SANDBOX_TEST_HELPER")
	if what == "" {
		t.Skip("helper process for other tests")
	}
	path := os.Getenv("SANDBOX_TEST_ARG")
	var err error
	switch what {
	case "tiocsti":
		// On stdin (/dev/null): ENOTTY without the filter, EPERM with it.
		b := byte('x')
		err = unix.IoctlSetPointerInt(0, unix.TIOCSTI, int(b))
	case "setxattr":
		err = unix.Setxattr(path, "user.sandbox_test", []byte("x"), 0)
	case "utimes":
		ts := []unix.Timespec{unix.NsecToTimespec(981158400e9), unix.NsecToTimespec(981158400e9)}
		err = unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, 0)
	default:
		err = escape(what, path)
	}
	name := "ok"
	var errno unix.Errno
	switch {
	case errors.As(err, &errno):
		name = unix.ErrnoName(errno)
	case err != nil:
		name = err.Error()
	}
	fmt.Printf("errno=%s\n", name)
	os.Exit(0)
}

// escape tries a way around the read-only mounts of the mount namespace
// step, ending with chmod 000 of path.
func escape(what, path string) error {
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	switch what {
	case "open_tree":
		// A detached clone of the directory, made writable.
		fd, err := unix.OpenTree(unix.AT_FDCWD, filepath.Dir(path), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return err
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, rw); err != nil {
			return err
		}
		return unix.Fchmodat(fd, filepath.Base(path), 0, 0)
	case "mount_setattr":
		if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, rw); err != nil {
			return err
		}
	case "remount":
		if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND, ""); err != nil {
			return err
		}
	case "umount":
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			return err
		}
	case "setns":
		// Back to the parent's mount namespace.
		runtime.LockOSThread()
		pidfd, err := unix.PidfdOpen(os.Getppid(), 0)
		if err != nil {
			return err
		}
		if err := unix.Setns(pidfd, unix.CLONE_NEWNS); err != nil {
			return err
		}
	case "procroot":
		path = fmt.Sprintf("/proc/%d/root%s", os.Getppid(), path)
	default:
		return fmt.Errorf("unknown helper %q", what)
	}
	return unix.Chmod(path, 0)
}
