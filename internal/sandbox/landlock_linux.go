//go:build linux

package sandbox

import (
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock network rights and scopes, as numbered by the kernel.
const (
	accessNetBindTCP    = 1 << 0
	accessNetConnectTCP = 1 << 1

	scopeAbstractUnixSocket = 1 << 0 // ABI 6
	scopeSignal             = 1 << 1 // ABI 6

	ruleNetPort = 2 // LANDLOCK_RULE_NET_PORT
)

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6's scoped field;
// its size tells the kernel which fields are present.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	access uint64
	port   uint64
}

// rulesetFor returns a Landlock ruleset for rp, a resolved policy (see
// Policy.resolved), on ABI abi, its write roots carved around holes: a
// file descriptor (close-on-exec) that the caller closes.
//
// Rulesets are cached: building one costs a system call or four per rule,
// and the rules change only when the policy or a directory that carve
// listed changes. A cached ruleset is reused only while every listed
// directory has the same inode and modification time as when it was
// listed. Even a stale ruleset errs on the safe side: rules follow inodes,
// so an entry created since has no rule (it is denied, not allowed) and a
// denied inode never gains one.
func rulesetFor(abi int, rp *Policy, holes []string) (int, error) {
	key := fmt.Sprintf("%d|%v|%q|%q|%q|%q|%q|%d|%d|%v", abi, rp.ReadOnly, rp.WriteAllow, holes,
		rp.ReadDeny, rp.ReadAllow, rp.TempDir, rp.Network, rp.ProxyPort, rp.AllowLocalBinding)
	if fd, ok := rulesets.get(key); ok {
		return fd, nil
	}
	fd, stamps, err := buildRuleset(abi, rp, holes)
	if err != nil {
		return -1, err
	}
	return rulesets.put(key, fd, stamps)
}

// dirStamp is what a listed directory looked like when it was listed.
type dirStamp struct {
	path     string
	dev, ino uint64
	mtime    unix.Timespec
}

func stampOf(path string) (dirStamp, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return dirStamp{}, false
	}
	return dirStamp{path: path, dev: st.Dev, ino: st.Ino, mtime: st.Mtim}, true
}

// rulesetCacheSize bounds the cached rulesets (each holds a descriptor).
const rulesetCacheSize = 16

type cachedRuleset struct {
	key    string
	fd     int
	stamps []dirStamp
}

// rulesetCache is a small most-recently-used cache of rulesets.
type rulesetCache struct {
	mu      sync.Mutex
	entries []*cachedRuleset // most recent first
}

var rulesets rulesetCache

// get returns a duplicate of the cached ruleset for key if it is still
// current.
func (c *rulesetCache) get(key string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key != key {
			continue
		}
		for _, s := range e.stamps {
			if now, ok := stampOf(s.path); !ok || now != s {
				c.entries = slices.Delete(c.entries, i, i+1)
				unix.Close(e.fd)
				return -1, false
			}
		}
		fd, err := unix.FcntlInt(uintptr(e.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1, false
		}
		copy(c.entries[1:i+1], c.entries[:i])
		c.entries[0] = e
		return fd, true
	}
	return -1, false
}

// put caches fd under key and returns a duplicate for the caller; fd
// belongs to the cache from now on.
func (c *rulesetCache) put(key string, fd int, stamps []dirStamp) (int, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sandbox: dup ruleset: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key {
			unix.Close(e.fd)
			c.entries = slices.Delete(c.entries, i, i+1)
			break
		}
	}
	c.entries = slices.Insert(c.entries, 0, &cachedRuleset{key: key, fd: fd, stamps: stamps})
	if len(c.entries) > rulesetCacheSize {
		unix.Close(c.entries[rulesetCacheSize].fd)
		c.entries = c.entries[:rulesetCacheSize]
	}
	return dup, nil
}

// buildRuleset creates a Landlock ruleset for p (resolved) on ABI abi,
// its write roots carved around holes, and returns its file descriptor
// (close-on-exec) and the directories listed to build it, stamped before
// they were read.
func buildRuleset(abi int, p *Policy, holes []string) (int, []dirStamp, error) {
	r := rightsFor(abi)
	var stamps []dirStamp
	list := func(dir string) ([]fs.DirEntry, error) {
		st, ok := stampOf(dir)
		if !ok {
			return nil, fmt.Errorf("sandbox: stat %s", dir)
		}
		stamps = append(stamps, st)
		return readDir(dir)
	}
	grants, err := p.grants(r, list, holes)
	if err != nil {
		return -1, nil, err
	}
	attr := rulesetAttr{handledFS: r.handled}
	size := unsafe.Sizeof(attr.handledFS)
	if abi >= minNetABI && p.Network != NetAll {
		attr.handledNet = accessNetConnectTCP
		if !p.AllowLocalBinding {
			attr.handledNet |= accessNetBindTCP
		}
		size = unsafe.Offsetof(attr.scoped)
	}
	if abi >= 6 {
		attr.scoped = scopeAbstractUnixSocket | scopeSignal
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, nil, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	ok := false
	defer func() {
		if !ok {
			unix.Close(ruleset)
		}
	}()
	for _, g := range grants {
		if err := addPathRule(ruleset, g); err != nil {
			return -1, nil, err
		}
	}
	if p.Network == NetProxy {
		port := netPortAttr{access: accessNetConnectTCP, port: uint64(p.ProxyPort)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), ruleNetPort,
			uintptr(unsafe.Pointer(&port)), 0, 0, 0); errno != 0 {
			return -1, nil, fmt.Errorf("sandbox: landlock rule for port %d: %w", p.ProxyPort, errno)
		}
	}
	ok = true
	return ruleset, stamps, nil
}

// addPathRule adds g to the ruleset. A path that vanished since it was
// listed is skipped: there is nothing left to grant.
func addPathRule(ruleset int, g grant) error {
	fd, err := unix.Open(g.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: opening %s: %w", g.path, err)
	}
	defer unix.Close(fd)
	access := g.access
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", g.path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	// The kernel's struct is packed (12 bytes); x/sys's has the same
	// fields at the same offsets, followed by padding the kernel ignores.
	attr := &unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock rule for %s: %w", g.path, errno)
	}
	return nil
}

func closeFD(fd int) { unix.Close(fd) }
