package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// testArch is a made-up architecture, so that the test runs anywhere.
var testArch = seccompArch{audit: 0xc000003e, x32: true, socket: 41, ioctl: 16, ioUringSetup: 425,
	mounts: []uint32{165, 166, 155, 428, 429, 430, 431, 432, 433, 442, 467, 308}}

// seccompData builds a struct seccomp_data as a little-endian machine
// lays it out, for x/net/bpf's interpreter. The kernel's seccomp loads
// 32-bit words in native byte order while the interpreter reads them
// big-endian, so each word is stored big-endian at its native offset: a
// 64-bit argument's low word first, then its high word.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[20+8*i:], uint32(a>>32))
	}
	return b
}

// TestSeccompProgram runs the filter in a BPF interpreter over the cases
// it must refuse and the ones it must let through.
func TestSeccompProgram(t *testing.T) {
	const (
		allow = seccompRetAllow
		eperm = seccompRetErrno | errnoEPERM
	)
	tests := []struct {
		name     string
		arch, nr uint32
		args     []uint64
		// want with TCP allowed, with UNIX sockets only, and with
		// every socket (NetAll)
		tcp, unix, all uint32
	}{
		{"read", testArch.audit, 0, nil, allow, allow, allow},
		{"foreign arch", 0x40000003, 0, nil, eperm, eperm, eperm},
		{"x32 abi", testArch.audit, x32SyscallBit | 41, nil, eperm, eperm, eperm},
		{"io_uring_setup", testArch.audit, 425, nil, eperm, eperm, eperm},
		{"ioctl TIOCSTI", testArch.audit, 16, []uint64{0, ioctlTIOCSTI}, eperm, eperm, eperm},
		{"ioctl TIOCSTI high bits", testArch.audit, 16, []uint64{0, 1<<32 | ioctlTIOCSTI}, eperm, eperm, eperm},
		{"ioctl TIOCLINUX", testArch.audit, 16, []uint64{0, ioctlTIOCLINUX}, eperm, eperm, eperm},
		{"ioctl FIONREAD", testArch.audit, 16, []uint64{0, 0x541b}, allow, allow, allow},
		{"unix stream", testArch.audit, 41, []uint64{afUnix, sockStream, 0}, allow, allow, allow},
		{"unix dgram", testArch.audit, 41, []uint64{afUnix, 2, 0}, allow, allow, allow},
		{"tcp", testArch.audit, 41, []uint64{afInet, sockStream, 0}, allow, eperm, allow},
		{"tcp explicit", testArch.audit, 41, []uint64{afInet, sockStream, ipprotoTCP}, allow, eperm, allow},
		{"tcp6 nonblock cloexec", testArch.audit, 41, []uint64{afInet6, sockStream | sockNonblock | sockCloexec, 0}, allow, eperm, allow},
		{"tcp domain high bits", testArch.audit, 41, []uint64{1<<32 | afInet, sockStream, 0}, allow, eperm, allow},
		{"udp", testArch.audit, 41, []uint64{afInet, 2, 0}, eperm, eperm, allow},
		{"udp6", testArch.audit, 41, []uint64{afInet6, 2 | sockCloexec, 0}, eperm, eperm, allow},
		{"raw", testArch.audit, 41, []uint64{afInet, 3, 1}, eperm, eperm, allow},
		{"sctp stream", testArch.audit, 41, []uint64{afInet, sockStream, 132}, eperm, eperm, allow},
		{"mptcp", testArch.audit, 41, []uint64{afInet6, sockStream, 262}, eperm, eperm, allow},
		{"seqpacket", testArch.audit, 41, []uint64{afInet, 5, 0}, eperm, eperm, allow},
		{"netlink", testArch.audit, 41, []uint64{16, 3, 0}, eperm, eperm, allow},
		{"packet", testArch.audit, 41, []uint64{17, 3, 0}, eperm, eperm, allow},
		{"vsock", testArch.audit, 41, []uint64{40, sockStream, 0}, eperm, eperm, allow},
		{"mount", testArch.audit, 165, nil, eperm, eperm, eperm},
		{"umount2", testArch.audit, 166, nil, eperm, eperm, eperm},
		{"open_tree", testArch.audit, 428, nil, eperm, eperm, eperm},
		{"mount_setattr", testArch.audit, 442, nil, eperm, eperm, eperm},
		{"setns", testArch.audit, 308, nil, eperm, eperm, eperm},
		{"unshare", testArch.audit, 272, nil, allow, allow, allow},
		{"socketpair", testArch.audit, 53, []uint64{afUnix, sockStream, 0}, allow, allow, allow},
	}
	for rule := range numSocketRules {
		raw, err := seccompProgram(testArch, rule)
		if err != nil {
			t.Fatal(err)
		}
		var ins []bpf.Instruction
		for _, r := range raw {
			ins = append(ins, r.Disassemble())
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatalf("rule %d: %v", rule, err)
		}
		for _, tt := range tests {
			got, err := vm.Run(seccompData(tt.arch, tt.nr, tt.args...))
			want := [numSocketRules]uint32{socketsUnix: tt.unix, socketsTCP: tt.tcp, socketsAny: tt.all}[rule]
			if err != nil || uint32(got) != want {
				t.Errorf("rule %d %s: got %#x (%v), want %#x", rule, tt.name, got, err, want)
			}
		}
	}
}
