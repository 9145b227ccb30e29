package sandbox

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Values the seccomp filter compares against; they are the same on every
// architecture Linux supports here.
const (
	seccompRetAllow = 0x7fff0000 // SECCOMP_RET_ALLOW
	seccompRetErrno = 0x00050000 // SECCOMP_RET_ERRNO, with the errno in the low bits
	errnoEPERM      = 1

	afUnix  = 1
	afInet  = 2
	afInet6 = 10

	sockStream   = 1
	sockNonblock = 0x800
	sockCloexec  = 0x80000
	ipprotoTCP   = 6

	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541c

	x32SyscallBit = 0x40000000

	// Offsets in struct seccomp_data: nr, arch, then the instruction
	// pointer and six 64-bit arguments. Arguments are C ints here, so
	// only their low 32 bits (first, on little-endian machines) count.
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// seccompArch describes the system calls of one architecture.
type seccompArch struct {
	audit        uint32 // AUDIT_ARCH_* of the native ABI
	x32          bool   // reject the x32 ABI (amd64)
	socket       uint32
	ioctl        uint32
	ioUringSetup uint32
	// mounts are the system calls that change mounts or mount
	// namespaces: mount, umount2, pivot_root, open_tree, move_mount,
	// fsopen, fsconfig, fsmount, fspick, mount_setattr, open_tree_attr
	// and setns. Landlock refuses some of them (mount, umount, move_mount,
	// pivot_root) but not open_tree and mount_setattr, with which a
	// command running as root could clone a read-only mount, make the
	// clone writable and change metadata through it; and setns could
	// take it back to the parent's mount namespace.
	mounts []uint32
}

// labelled is an instruction whose jumps name labels, resolved later.
type labelled struct {
	label  string // set on a label marker, which emits no instruction
	ins    bpf.Instruction
	jt, jf string // for conditional jumps: targets ("" falls through)
	cond   bpf.JumpTest
	val    uint32
}

// socketRule is which sockets the seccomp filter lets a command create.
type socketRule int

const (
	// socketsUnix allows AF_UNIX sockets only.
	socketsUnix socketRule = iota
	// socketsTCP allows AF_UNIX sockets and TCP streams (IPv4 and IPv6).
	socketsTCP
	// socketsAny allows every socket (NetAll).
	socketsAny

	numSocketRules
)

// seccompProgram is the filter for commands that may create the sockets
// of rule. Anything it refuses fails with EPERM, so programs see an
// ordinary permission error. Whatever the rule, io_uring (which would
// bypass the socket check, and is a large attack surface), the system
// calls that change mounts (see seccompArch.mounts) and the TIOCSTI and
// TIOCLINUX ioctls are refused.
func seccompProgram(a seccompArch, rule socketRule) ([]bpf.RawInstruction, error) {
	ld := func(off uint32) labelled { return labelled{ins: bpf.LoadAbsolute{Off: off, Size: 4}} }
	jeq := func(v uint32, jt, jf string) labelled {
		return labelled{cond: bpf.JumpEqual, val: v, jt: jt, jf: jf}
	}
	ret := func(v uint32) labelled { return labelled{ins: bpf.RetConstant{Val: v}} }
	label := func(l string) labelled { return labelled{label: l} }
	const deny = seccompRetErrno | errnoEPERM

	p := []labelled{
		ld(offArch),
		jeq(a.audit, "", "deny"), // another ABI (such as 32-bit x86): no
		ld(offNr),
	}
	if a.x32 {
		p = append(p, labelled{cond: bpf.JumpGreaterOrEqual, val: x32SyscallBit, jt: "deny"})
	}
	for _, nr := range a.mounts {
		p = append(p, jeq(nr, "deny", ""))
	}
	if rule != socketsAny {
		p = append(p, jeq(a.socket, "socket", ""))
	}
	p = append(p,
		jeq(a.ioUringSetup, "deny", ""),
		jeq(a.ioctl, "ioctl", "allow"),

		label("ioctl"),
		ld(offArg0+8),
		jeq(ioctlTIOCSTI, "deny", ""),
		jeq(ioctlTIOCLINUX, "deny", "allow"),
	)
	if rule != socketsAny {
		p = append(p,
			label("socket"),
			ld(offArg0),
			jeq(afUnix, "allow", ""),
		)
	}
	if rule == socketsTCP {
		p = append(p,
			jeq(afInet, "inet", ""),
			jeq(afInet6, "inet", "deny"),
			label("inet"),
			ld(offArg0+8),
			labelled{ins: bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^uint32(sockNonblock | sockCloexec)}},
			jeq(sockStream, "", "deny"),
			ld(offArg0+16),
			jeq(0, "allow", ""),
			jeq(ipprotoTCP, "allow", "deny"),
		)
	}
	// Jumps go forward only, so the verdicts come last.
	p = append(p,
		label("deny"), ret(deny),
		label("allow"), ret(seccompRetAllow),
	)
	return assemble(p)
}

// assemble resolves the labels of p and assembles it.
func assemble(p []labelled) ([]bpf.RawInstruction, error) {
	at := map[string]int{}
	n := 0
	for _, l := range p {
		if l.label != "" {
			at[l.label] = n
			continue
		}
		n++
	}
	var out []bpf.Instruction
	for _, l := range p {
		if l.label != "" {
			continue
		}
		if l.ins != nil {
			out = append(out, l.ins)
			continue
		}
		here := len(out)
		skip := func(target string) (uint8, error) {
			if target == "" {
				return 0, nil
			}
			to, ok := at[target]
			if !ok || to <= here || to-here-1 > 255 {
				return 0, fmt.Errorf("sandbox: seccomp: bad jump to %q", target)
			}
			return uint8(to - here - 1), nil
		}
		jt, err := skip(l.jt)
		if err != nil {
			return nil, err
		}
		jf, err := skip(l.jf)
		if err != nil {
			return nil, err
		}
		out = append(out, bpf.JumpIf{Cond: l.cond, Val: l.val, SkipTrue: jt, SkipFalse: jf})
	}
	raw, err := bpf.Assemble(out)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	return raw, nil
}
