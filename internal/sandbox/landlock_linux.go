//go:build linux

package sandbox

import (
	"fmt"
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

// buildRuleset creates a Landlock ruleset for p on ABI abi and returns its
// file descriptor (close-on-exec).
func buildRuleset(abi int, p *Policy) (int, error) {
	r := rightsFor(abi)
	grants, err := p.grants(r, readDir)
	if err != nil {
		return -1, err
	}
	attr := rulesetAttr{handledFS: r.handled}
	size := unsafe.Sizeof(attr.handledFS)
	if abi >= minNetABI {
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
		return -1, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
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
			return -1, err
		}
	}
	if p.Network == NetProxy {
		port := netPortAttr{access: accessNetConnectTCP, port: uint64(p.ProxyPort)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), ruleNetPort,
			uintptr(unsafe.Pointer(&port)), 0, 0, 0); errno != 0 {
			return -1, fmt.Errorf("sandbox: landlock rule for port %d: %w", p.ProxyPort, errno)
		}
	}
	ok = true
	return ruleset, nil
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
