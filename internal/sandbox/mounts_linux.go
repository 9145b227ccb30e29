//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Landlock has no right for a file's mode, owner, timestamps, extended
// attributes or inode flags: chmod, chown, utimes, setxattr and chattr
// need only the permission the user has anyway. The sandbox covers them
// with a mount namespace of the starting thread's own, in which every
// mount but the writable roots is read-only (see the package doc).

// maxMountHoles bounds the denied paths bound read-only one by one, so
// that a long deny list cannot make every start slow; the others keep
// only Landlock's protection (their contents, not their metadata).
const maxMountHoles = 64

// mountPlan is the mount namespace step of one command.
type mountPlan struct {
	// roots are the writable roots, clean, resolved, none inside
	// another: cloned with their submounts before everything else is
	// made read-only, and attached back on themselves after.
	roots []string
	// all is set when "/" is a writable root: nothing is made
	// read-only but the holes.
	all bool
	// holes are the denied paths inside the roots, none inside
	// another: bound on themselves, read-only.
	holes []string
	// ns is the namespace apply made, kept open so that its teardown
	// (unmounting its whole tree, which waits for an RCU grace period)
	// happens in the background once the command has exited, and not
	// on the command's exit path, which its caller waits for.
	ns *os.File
}

// planMounts computes the mount step for p, which must be resolved.
func planMounts(p *Policy) *mountPlan {
	var roots []string
	if p.TempDir != "" {
		roots = append(roots, p.TempDir)
	}
	if !p.ReadOnly {
		roots = append(roots, p.WriteAllow...)
	}
	m := &mountPlan{roots: outermost(roots)}
	if slices.Contains(m.roots, "/") {
		m.all, m.roots = true, nil
	}
	var holes []string
	for _, h := range append(slices.Clone(p.WriteDeny), p.ReadDeny...) {
		for _, r := range roots {
			if within(h, r) {
				holes = append(holes, h)
				break
			}
		}
	}
	m.holes = outermost(holes)
	if len(m.holes) > maxMountHoles {
		m.holes = m.holes[:maxMountHoles]
	}
	return m
}

// outermost sorts paths and drops the duplicates and the paths inside
// another of them.
func outermost(paths []string) []string {
	s := slices.Clone(paths)
	slices.Sort(s)
	var out []string
	for _, p := range s {
		if len(out) > 0 && within(p, out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// openNoSymlinks opens path (O_PATH) without following any symbolic
// link on the way, so that a link swapped in since the policy was
// resolved cannot redirect a mount.
func openNoSymlinks(path string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// apply moves the calling thread (locked, and to be discarded: the
// changes are permanent for it) to a mount namespace of its own, in
// which every mount outside the writable roots is read-only and the
// holes are read-only too. Commands started from the thread inherit it.
// Nothing of it reaches the process's other threads or other processes:
// the namespace's mounts are made private before anything is mounted.
func (m *mountPlan) apply() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	// unshare(CLONE_NEWNS) also unshared the thread's working directory
	// and root; the working directory still names the mount it was on,
	// which is about to be covered: it is entered again by name at the
	// end.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if !m.all {
		// Clone each root (with its submounts and their flags: a
		// read-only mount inside a root stays read-only) before
		// everything is made read-only, then attach the clones back.
		clones := make([]int, 0, len(m.roots))
		targets := make([]int, 0, len(m.roots))
		defer func() {
			for _, fd := range append(clones, targets...) {
				unix.Close(fd)
			}
		}()
		for _, r := range m.roots {
			target, err := openNoSymlinks(r)
			if err != nil {
				// Vanished or swapped for a link since it was resolved:
				// it stays read-only, which errs on the safe side.
				continue
			}
			clone, err := unix.OpenTree(target, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
			if err != nil {
				unix.Close(target)
				return fmt.Errorf("cloning %s: %w", r, err)
			}
			clones, targets = append(clones, clone), append(targets, target)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
			return fmt.Errorf("making mounts read-only: %w", err)
		}
		for i, clone := range clones {
			if err := unix.MoveMount(clone, "", targets[i], "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
				return fmt.Errorf("attaching %s: %w", m.roots[i], err)
			}
		}
	}
	for _, h := range m.holes {
		if err := bindReadOnly(h, ro); err != nil {
			return err
		}
	}
	// A command started with no Dir inherits the working directory. If
	// it cannot be entered again (it was removed, say), the command
	// starts on the covered mount: read-only, which errs on the safe
	// side.
	if wd, err := unix.Getwd(); err == nil {
		_ = unix.Chdir(wd)
	}
	if fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		m.ns = os.NewFile(uintptr(fd), "mnt namespace")
	}
	return nil
}

// nsReaper closes the namespaces of commands that have exited: each
// namespace waits on an epoll set for its command's pidfd to become
// readable. One goroutine serves them all, started at first use.
var nsReaper struct {
	once sync.Once
	ep   int
	err  error
	mu   sync.Mutex
	ns   map[int32]*os.File // by pidfd
}

// releaseAfterExit closes ns once the process pid, just started and not
// yet waited for, has exited; at once if it cannot tell when that is.
func releaseAfterExit(pid int, ns *os.File) {
	if ns == nil {
		return
	}
	r := &nsReaper
	r.once.Do(func() {
		r.ep, r.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if r.err == nil {
			r.ns = map[int32]*os.File{}
			go reapNamespaces()
		}
	})
	pidfd, err := unix.PidfdOpen(pid, 0)
	if r.err != nil || err != nil {
		ns.Close()
		return
	}
	r.mu.Lock()
	r.ns[int32(pidfd)] = ns
	r.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pidfd)}
	if err := unix.EpollCtl(r.ep, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		r.mu.Lock()
		delete(r.ns, int32(pidfd))
		r.mu.Unlock()
		unix.Close(pidfd)
		ns.Close()
	}
}

func reapNamespaces() {
	r := &nsReaper
	events := make([]unix.EpollEvent, 16)
	for {
		n, err := unix.EpollWait(r.ep, events, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:n] {
			unix.EpollCtl(r.ep, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			r.mu.Lock()
			ns := r.ns[ev.Fd]
			delete(r.ns, ev.Fd)
			r.mu.Unlock()
			unix.Close(int(ev.Fd))
			if ns != nil {
				ns.Close()
			}
		}
	}
}

// bindReadOnly binds path (a denied path inside a root, attached by now)
// on itself, read-only with everything beneath it. A path that vanished
// or became a link is left alone: Landlock still denies writing it.
func bindReadOnly(path string, ro *unix.MountAttr) error {
	target, err := openNoSymlinks(path)
	if err != nil {
		return nil
	}
	defer unix.Close(target)
	clone, err := unix.OpenTree(target, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("cloning %s: %w", path, err)
	}
	defer unix.Close(clone)
	if err := unix.MountSetattr(clone, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("making %s read-only: %w", path, err)
	}
	if err := unix.MoveMount(clone, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("attaching %s: %w", path, err)
	}
	return nil
}

// metadataProbe is the outcome of the one-time check of the mount
// namespace step.
var metadataProbe struct {
	once sync.Once
	err  error
}

// MetadataProtected reports whether sandboxed commands are kept from
// changing the mode, owner, timestamps, extended attributes and inode
// flags of files outside their writable roots (see the package doc).
// That takes a mount namespace, so CAP_SYS_ADMIN: an unprivileged user
// (or a container without it) gets false, with an error wrapping
// ErrNoMetadataProtection that says why; commands are still sandboxed
// by Landlock and seccomp then, only their metadata changes are not
// confined. The check runs once, on a thread that is discarded after.
func MetadataProtected() (bool, error) {
	metadataProbe.once.Do(func() {
		if _, err := Available(); err != nil {
			metadataProbe.err = fmt.Errorf("%w: %w", ErrNoMetadataProtection, err)
			return
		}
		plan := &mountPlan{roots: resolveAll([]string{"/tmp"})}
		done := make(chan error, 1)
		go onSpareThread(plan.apply, done, 0)
		if err := <-done; err != nil {
			metadataProbe.err = fmt.Errorf("%w: %w", ErrNoMetadataProtection, err)
		}
		if plan.ns != nil {
			plan.ns.Close()
		}
	})
	return metadataProbe.err == nil, metadataProbe.err
}
