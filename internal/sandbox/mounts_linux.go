//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Landlock has no right for a file's mode, owner, timestamps, extended
// attributes or inode flags: chmod, chown, utimes, setxattr and chattr
// need only the permission the user has anyway. The sandbox covers them
// with a mount namespace of the starting thread's own, in which every
// mount but the writable roots is read-only (see the package doc).

// maxMountHoles bounds the denied paths (WriteDeny and ReadDeny) bound
// read-only one by one, so that a long deny list cannot make every
// start slow; the others are carved out of the Landlock rules instead
// (their contents are kept, not their metadata). Protect paths are not
// counted: they are always bound.
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
	// binds are the directories between a writable root and a
	// protected path, shallowest first: bound on themselves, writable,
	// so that they cannot be renamed or removed (a mount point cannot).
	binds []string
	// holes are the denied and protected paths inside the roots, none
	// inside another: bound on themselves, read-only.
	holes []string
	// missing are the holes that do not exist yet: the placeholders
	// to make before the namespace (see acquirePlaceholders).
	missing []string
	// protected are the holes that are protected paths (existing or
	// not), outermost.
	protected []string
	// carved are the denied paths the mount step does not keep
	// read-only (beyond maxMountHoles, or outside the roots): the
	// Landlock rules are carved around them. The roots are granted
	// whole around the holes, which the mounts keep.
	carved []string
	// held are the placeholders bound by this plan, referenced until
	// its namespace is empty.
	held []*placeholder
	// ns is the namespace apply made, kept open so that its teardown
	// (unmounting its whole tree, which waits for an RCU grace period)
	// happens in the background once the command has exited, and not
	// on the command's exit path, which its caller waits for.
	ns *os.File
	// nsKey names ns, to find the processes left in it.
	nsKey nsKey
}

// planMounts computes the mount step for p, which must be resolved. It
// inspects the protected paths (see inspectProtect) and fails when one
// is reached through a symbolic link inside a writable root, which the
// command could replace.
func planMounts(p *Policy) (*mountPlan, error) {
	var roots []string
	if p.TempDir != "" {
		roots = append(roots, p.TempDir)
	}
	if !p.ReadOnly {
		roots = append(roots, p.WriteAllow...)
	}
	m := &mountPlan{roots: outermost(roots)}
	outer := m.roots
	if slices.Contains(m.roots, "/") {
		m.all, m.roots = true, nil
		outer = []string{"/"}
	}
	rootOf := func(path string) (string, bool) {
		for _, r := range outer {
			if within(path, r) {
				return r, true
			}
		}
		return "", false
	}
	denied := append(slices.Clone(p.WriteDeny), p.ReadDeny...)
	var protected []string
	for _, path := range p.Protect {
		info, err := inspectProtect(path)
		if err != nil {
			return nil, err
		}
		for _, l := range info.links {
			if r, ok := rootOf(l); ok && l != r {
				return nil, fmt.Errorf("sandbox: protected path %s is reached through the symbolic link %s inside the writable root %s, which the command could replace", path, l, r)
			}
		}
		t := info.target
		_, inRoot := rootOf(t)
		if !inRoot && !slices.ContainsFunc(outer, func(r string) bool { return within(r, t) }) {
			continue // read-only already, and so is everything beneath it
		}
		protected = append(protected, t)
		if info.missing {
			m.missing = append(m.missing, t)
		}
	}
	protected = outermost(protected)
	m.protected = protected
	var holes []string
	for _, h := range denied {
		if _, ok := rootOf(h); ok && !slices.ContainsFunc(protected, func(t string) bool { return within(h, t) }) {
			holes = append(holes, h)
		}
	}
	holes = outermost(holes)
	if len(holes) > maxMountHoles {
		holes = holes[:maxMountHoles]
	}
	m.holes = outermost(append(holes, protected...))
	m.missing = slices.DeleteFunc(m.missing, func(t string) bool { return !slices.Contains(m.holes, t) })
	var binds []string
	for _, t := range protected {
		r, ok := rootOf(t)
		if !ok || !slices.Contains(m.holes, t) {
			continue
		}
		for d := filepath.Dir(t); d != r && within(d, r); d = filepath.Dir(d) {
			binds = append(binds, d)
		}
	}
	slices.Sort(binds)
	m.binds = slices.Compact(binds)
	for _, d := range dedupe(denied) {
		if !slices.ContainsFunc(m.holes, func(h string) bool { return within(d, h) }) {
			m.carved = append(m.carved, d)
		}
	}
	return m, nil
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
	for _, d := range m.binds {
		if err := bindOnItself(d, nil); err != nil {
			return err
		}
	}
	for _, h := range m.holes {
		if err := bindOnItself(h, ro); err != nil {
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
	fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the mount namespace: %w", err)
	}
	m.ns = os.NewFile(uintptr(fd), "mnt namespace")
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat of the mount namespace: %w", err)
	}
	m.nsKey = nsKey{st.Dev, st.Ino}
	return nil
}

// nsReaper closes the namespaces of commands that have exited, and
// starts the release of the placeholders they bound: each namespace
// waits on an epoll set for its command's pidfd to become readable. One
// goroutine serves them all, started at first use.
var nsReaper struct {
	once sync.Once
	ep   int
	err  error
	mu   sync.Mutex
	ns   map[int32]reapable // by pidfd
}

// reapable is what is released when a command exits.
type reapable struct {
	ns   *os.File
	hold *nsHold // nil when the namespace bound no placeholder
}

func (r reapable) release() {
	if r.hold != nil {
		// The hold keeps the namespace open until it is released, so
		// that the namespace's inode, which names it in /proc, cannot be
		// reused by another command's namespace meanwhile. Not on the
		// reaper's goroutine: it reads /proc.
		r.hold.ns = r.ns
		go r.hold.release()
		return
	}
	if r.ns != nil {
		r.ns.Close()
	}
}

// releaseAfterExit closes ns once the process pid, just started and not
// yet waited for, has exited (at once if it cannot tell when that is),
// and then releases hold's placeholders once no process is left in the
// namespace (see nsHold.release, which checks that itself).
func releaseAfterExit(pid int, ns *os.File, hold *nsHold) {
	item := reapable{ns: ns, hold: hold}
	if ns == nil && hold == nil {
		return
	}
	r := &nsReaper
	r.once.Do(func() {
		r.ep, r.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if r.err == nil {
			r.ns = map[int32]reapable{}
			go reapNamespaces()
		}
	})
	pidfd, err := unix.PidfdOpen(pid, 0)
	if r.err != nil || err != nil {
		item.release()
		return
	}
	r.mu.Lock()
	r.ns[int32(pidfd)] = item
	r.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pidfd)}
	if err := unix.EpollCtl(r.ep, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		r.mu.Lock()
		delete(r.ns, int32(pidfd))
		r.mu.Unlock()
		unix.Close(pidfd)
		item.release()
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
			item, ok := r.ns[ev.Fd]
			delete(r.ns, ev.Fd)
			r.mu.Unlock()
			unix.Close(int(ev.Fd))
			if ok {
				item.release()
			}
		}
	}
}

// bindOnItself binds path (a path inside a root, attached by now) on
// itself with everything beneath it, read-only with ro (nil: as it is).
// It fails when path vanished or became a symbolic link since it was
// planned: the Landlock rules rely on the mounts for it.
func bindOnItself(path string, ro *unix.MountAttr) error {
	target, err := openNoSymlinks(path)
	if err != nil {
		return fmt.Errorf("opening %s to bind it: %w", path, err)
	}
	defer unix.Close(target)
	clone, err := unix.OpenTree(target, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("cloning %s: %w", path, err)
	}
	defer unix.Close(clone)
	if ro != nil {
		if err := unix.MountSetattr(clone, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, ro); err != nil {
			return fmt.Errorf("making %s read-only: %w", path, err)
		}
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
