//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Policy.Protect paths are enforced in two ways. With the mount step, an
// existing protected path inside a writable root is bound read-only on
// itself, and a missing one gets a placeholder: an empty directory made
// at its first missing component and bound read-only, so that nothing
// can be made at that name or inside it. The directories between the
// writable root and a protected path are bound on themselves writable,
// which keeps them from being renamed or removed (a mount point cannot
// be), so that the command cannot move a protected path's parent away
// and make a new one. Without the mount step, the protected paths that
// exist are carved out of the Landlock rules like WriteDeny.

// maxLinkHops bounds the symbolic links followed while inspecting one
// protected path, as the kernel's ELOOP does.
const maxLinkHops = 40

// protectInfo is where a Policy.Protect path leads.
type protectInfo struct {
	// target is the path with its symbolic links resolved when it
	// exists, else its first missing component (whose parent is
	// resolved).
	target  string
	missing bool
	// links are the symbolic links met on the way, each named by its
	// own location (its parent resolved): replacing one would redirect
	// the protected path.
	links []string
}

// inspectProtect follows path one component at a time, without
// following any symbolic link blindly, and reports where it leads. A
// component beneath a non-directory cannot exist: the non-directory is
// the target then (replacing it is what would let the path be made).
func inspectProtect(path string) (protectInfo, error) {
	var info protectInfo
	rest := strings.Split(filepath.Clean(path), "/")
	cur := "/"
	hops := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			info.target, info.missing = next, true
			return info, nil
		case errors.Is(err, unix.ENOTDIR):
			info.target = cur
			return info, nil
		case err != nil:
			return info, fmt.Errorf("sandbox: protected path %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return info, fmt.Errorf("sandbox: protected path %s: %w", path, unix.ELOOP)
		}
		info.links = append(info.links, next)
		dest, err := os.Readlink(next)
		if err != nil {
			return info, fmt.Errorf("sandbox: protected path %s: %w", path, err)
		}
		if filepath.IsAbs(dest) {
			cur = "/"
		}
		rest = append(strings.Split(dest, "/"), rest...)
	}
	info.target = cur
	return info, nil
}

// landlockHoles returns the holes the write roots of p (resolved) are
// carved around without the mount step: the denied paths, the protected
// paths that exist, and the symbolic links on the way to protected paths
// (their parents are carved then, so that they cannot be replaced).
func landlockHoles(p *Policy) ([]string, error) {
	holes := append(slices.Clone(p.WriteDeny), p.ReadDeny...)
	for _, path := range p.Protect {
		info, err := inspectProtect(path)
		if err != nil {
			return nil, err
		}
		holes = append(holes, info.links...)
		if !info.missing {
			holes = append(holes, info.target)
		}
	}
	return dedupe(holes), nil
}

func dedupe(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// ProtectsMissingPaths reports whether Policy.Protect paths that do not
// exist when a command starts are enforced: only with the mount step
// (see MetadataProtected), which holds them with placeholders. When it
// reports false, with the reason, only the protected paths that exist
// are kept from the command, and a caller should say so.
func ProtectsMissingPaths() (bool, error) {
	if testNoMountStep {
		return false, fmt.Errorf("%w: the mount step is switched off", ErrNoMetadataProtection)
	}
	return MetadataProtected()
}

// placeholder is an empty directory the sandbox made to hold a missing
// protected path.
type placeholder struct {
	path     string
	dev, ino uint64
	// refs counts the mount namespaces that bound it and may still have
	// processes in them.
	refs int
}

// nsKey names a mount namespace: the device and inode of its nsfs file.
type nsKey struct{ dev, ino uint64 }

// nsHold is what one command's mount namespace holds: the placeholders
// it bound. They are released once no process is left in the namespace
// (nor in a namespace copied from it, which has the same mounts).
type nsHold struct {
	key  nsKey
	held []*placeholder
	// ns is the namespace itself, open until the hold is released: while
	// it is open, no other namespace can have key.
	ns *os.File
}

// protectState is the process's placeholders and the namespaces that
// hold them.
var protectState struct {
	mu     sync.Mutex
	byPath map[string]*placeholder
	holds  map[*nsHold]bool
}

func inodeOf(path string) (dev, ino uint64, dir, ok bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0, 0, false, false
	}
	return st.Dev, st.Ino, st.Mode&unix.S_IFMT == unix.S_IFDIR, true
}

// ours returns the placeholder at path if the directory there is still
// the one the sandbox made.
func ours(path string) *placeholder {
	ph := protectState.byPath[path]
	if ph == nil {
		return nil
	}
	if dev, ino, dir, ok := inodeOf(path); !ok || !dir || dev != ph.dev || ino != ph.ino {
		return nil
	}
	return ph
}

// acquirePlaceholders makes the placeholders of m (its missing protected
// paths), or shares them with the commands that made them, and takes a
// reference on every placeholder m binds. A missing path inside a
// placeholder is held by that placeholder instead of one of its own, so
// that placeholders never nest. Where something appeared at a missing
// path since it was planned, that is bound instead (apply refuses a
// symbolic link). On error nothing is held.
func (m *mountPlan) acquirePlaceholders() error {
	s := &protectState
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(m.protected) == 0 && len(s.byPath) == 0 {
		return nil
	}
	if s.byPath == nil {
		s.byPath = map[string]*placeholder{}
		s.holds = map[*nsHold]bool{}
	}
	// A protected path that existed when m was planned may be gone
	// since (another command's placeholder, removed meanwhile).
	for _, h := range m.holes {
		if slices.Contains(m.protected, h) && !slices.Contains(m.missing, h) {
			if _, err := os.Lstat(h); errors.Is(err, fs.ErrNotExist) {
				m.missing = append(m.missing, h)
			}
		}
	}
	holes := slices.Clone(m.holes)
	for _, path := range m.missing {
		for p := range s.byPath {
			if p != path && within(path, p) && ours(p) != nil {
				holes = slices.DeleteFunc(holes, func(h string) bool { return h == path })
				holes = append(holes, p)
				path = ""
				break
			}
		}
		if path == "" || ours(path) != nil {
			continue
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue // made by someone else since: bound as it is
			}
			m.dropUnheld()
			return fmt.Errorf("sandbox: making a placeholder for protected path %s: %w", path, err)
		}
		dev, ino, _, ok := inodeOf(path)
		if !ok {
			m.dropUnheld()
			return fmt.Errorf("sandbox: placeholder %s vanished", path)
		}
		s.byPath[path] = &placeholder{path: path, dev: dev, ino: ino}
	}
	m.holes = outermost(holes)
	for _, h := range m.holes {
		if ph := ours(h); ph != nil {
			ph.refs++
			m.held = append(m.held, ph)
		}
	}
	// A placeholder made above but covered by another hole is not
	// bound: drop it at once.
	m.dropUnheld()
	return nil
}

// dropUnheld drops the placeholders made for m that nothing holds. The
// caller holds protectState.mu.
func (m *mountPlan) dropUnheld() {
	for _, path := range m.missing {
		if ph := protectState.byPath[path]; ph != nil && ph.refs == 0 {
			dropPlaceholder(ph)
		}
	}
}

// releaseHeld drops m's references at once (nothing was started in its
// namespace). The caller holds protectState.mu.
func (m *mountPlan) releaseHeld() {
	for _, ph := range m.held {
		if ph.refs--; ph.refs <= 0 {
			dropPlaceholder(ph)
		}
	}
	m.held = nil
}

// releaseNow releases m's placeholders when its command was not started.
func (m *mountPlan) releaseNow() {
	protectState.mu.Lock()
	defer protectState.mu.Unlock()
	m.releaseHeld()
}

// dropPlaceholder forgets ph and removes its directory if it is still
// the empty directory the sandbox made. The caller holds
// protectState.mu.
func dropPlaceholder(ph *placeholder) {
	if protectState.byPath[ph.path] == ph {
		delete(protectState.byPath, ph.path)
	}
	if dev, ino, dir, ok := inodeOf(ph.path); ok && dir && dev == ph.dev && ino == ph.ino {
		// rmdir refuses a directory that is not empty: it is left alone.
		_ = unix.Rmdir(ph.path)
	}
}

// holdFor registers the placeholders m bound in its namespace, key, to
// be released by release once the namespace is empty. It returns nil
// when m holds none.
func (m *mountPlan) holdFor(key nsKey) *nsHold {
	if len(m.held) == 0 {
		return nil
	}
	h := &nsHold{key: key, held: m.held}
	protectState.mu.Lock()
	protectState.holds[h] = true
	protectState.mu.Unlock()
	m.held = nil
	return h
}

// Holds whose command has exited wait in the scanner's pending set; one
// goroutine walks /proc for all of them at once, at most every
// scanInterval, so that a busy session pays for one walk per interval and
// not one per command. While a pending namespace still has processes, the
// walks back off to maxScanInterval.
const (
	scanInterval    = 50 * time.Millisecond
	maxScanInterval = 2 * time.Second
)

var scanner struct {
	mu      sync.Mutex
	pending map[*nsHold]bool
	running bool
}

// release hands h, whose command has exited, to the scanner, which
// releases its placeholders once no process is left in its namespace.
func (h *nsHold) release() {
	scanner.mu.Lock()
	defer scanner.mu.Unlock()
	if scanner.pending == nil {
		scanner.pending = map[*nsHold]bool{}
	}
	scanner.pending[h] = true
	if !scanner.running {
		scanner.running = true
		go scanLoop()
	}
}

// scanLoop releases the pending holds whose namespaces are empty, until
// none is pending.
func scanLoop() {
	delay := scanInterval
	for {
		time.Sleep(delay)
		scanner.mu.Lock()
		holds := make([]*nsHold, 0, len(scanner.pending))
		for h := range scanner.pending {
			holds = append(holds, h)
		}
		if len(holds) == 0 {
			scanner.running = false
			scanner.mu.Unlock()
			return
		}
		scanner.mu.Unlock()
		busy := inUse(holds)
		freed := 0
		for _, h := range holds {
			if busy[h] {
				continue
			}
			scanner.mu.Lock()
			delete(scanner.pending, h)
			scanner.mu.Unlock()
			h.free()
			freed++
		}
		if freed == len(holds) {
			delay = scanInterval
		} else {
			delay = min(2*delay, maxScanInterval)
		}
	}
}

// free drops h's references and closes its namespace.
func (h *nsHold) free() {
	s := &protectState
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holds, h)
	if h.ns != nil {
		h.ns.Close()
		h.ns = nil
	}
	for _, ph := range h.held {
		if ph.refs--; ph.refs <= 0 {
			dropPlaceholder(ph)
		}
	}
	h.held = nil
}

// inUse reports which of holds still have a task (a thread of any
// process) in their namespace, or in another namespace, not the
// process's own nor one of a command still running, in which one of
// their placeholders is a mount point (a copy of their namespace, made by
// unshare). When /proc cannot be read, every hold is in use: keeping a
// placeholder errs on the safe side.
func inUse(holds []*nsHold) map[*nsHold]bool {
	busy := map[*nsHold]bool{}
	all := func() map[*nsHold]bool {
		for _, h := range holds {
			busy[h] = true
		}
		return busy
	}
	self, ok := nsOf("/proc/self/ns/mnt")
	if !ok {
		return all()
	}
	byKey := map[nsKey][]*nsHold{}
	for _, h := range holds {
		byKey[h.key] = append(byKey[h.key], h)
	}
	tracked := map[nsKey]bool{}
	protectState.mu.Lock()
	for other := range protectState.holds {
		if _, pending := byKey[other.key]; !pending {
			tracked[other.key] = true
		}
	}
	protectState.mu.Unlock()
	var paths []string
	for _, h := range holds {
		for _, ph := range h.held {
			paths = append(paths, ph.path)
		}
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return all()
	}
	foreign := map[nsKey]bool{}
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		taskDir := filepath.Join("/proc", p.Name(), "task")
		tasks, err := os.ReadDir(taskDir)
		if err != nil {
			continue // gone
		}
		for _, t := range tasks {
			dir := filepath.Join(taskDir, t.Name())
			k, ok := nsOf(filepath.Join(dir, "ns", "mnt"))
			if !ok || k == self || tracked[k] {
				continue
			}
			if hs, mine := byKey[k]; mine {
				for _, h := range hs {
					busy[h] = true
				}
				continue
			}
			if _, seen := foreign[k]; seen {
				continue
			}
			foreign[k] = true
			mounted := mountedAmong(dir, paths)
			for _, h := range holds {
				for _, ph := range h.held {
					if mounted[ph.path] {
						busy[h] = true
					}
				}
			}
		}
	}
	return busy
}

func nsOf(path string) (nsKey, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nsKey{}, false
	}
	return nsKey{st.Dev, st.Ino}, true
}

// mountedAmong returns which of paths are mount points for the task
// whose /proc directory is dir, as seen from its root.
func mountedAmong(dir string, paths []string) map[string]bool {
	out := map[string]bool{}
	root, err := os.Readlink(filepath.Join(dir, "root"))
	if err != nil {
		return out // gone, or a kernel thread
	}
	f, err := os.Open(filepath.Join(dir, "mountinfo"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if root != "/" {
			mp = filepath.Join(root, mp)
		}
		if slices.Contains(paths, mp) {
			out[mp] = true
		}
	}
	return out
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
