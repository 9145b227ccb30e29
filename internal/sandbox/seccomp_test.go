package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// testArch is a made-up architecture, so that the test runs anywhere.
var testArch = seccompArch{audit: 0xc000003e, x32: true, socket: 41, ioctl: 16, ioUringSetup: 425}

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
		name      string
		arch, nr  uint32
		args      []uint64
		tcp, want uint32 // want with TCP allowed, and without
	}{
		{"read", testArch.audit, 0, nil, allow, allow},
		{"foreign arch", 0x40000003, 0, nil, eperm, eperm},
		{"x32 abi", testArch.audit, x32SyscallBit | 41, nil, eperm, eperm},
		{"io_uring_setup", testArch.audit, 425, nil, eperm, eperm},
		{"ioctl TIOCSTI", testArch.audit, 16, []uint64{0, ioctlTIOCSTI}, eperm, eperm},
		{"ioctl TIOCSTI high bits", testArch.audit, 16, []uint64{0, 1<<32 | ioctlTIOCSTI}, eperm, eperm},
		{"ioctl TIOCLINUX", testArch.audit, 16, []uint64{0, ioctlTIOCLINUX}, eperm, eperm},
		{"ioctl FIONREAD", testArch.audit, 16, []uint64{0, 0x541b}, allow, allow},
		{"unix stream", testArch.audit, 41, []uint64{afUnix, sockStream, 0}, allow, allow},
		{"unix dgram", testArch.audit, 41, []uint64{afUnix, 2, 0}, allow, allow},
		{"tcp", testArch.audit, 41, []uint64{afInet, sockStream, 0}, allow, eperm},
		{"tcp explicit", testArch.audit, 41, []uint64{afInet, sockStream, ipprotoTCP}, allow, eperm},
		{"tcp6 nonblock cloexec", testArch.audit, 41, []uint64{afInet6, sockStream | sockNonblock | sockCloexec, 0}, allow, eperm},
		{"tcp domain high bits", testArch.audit, 41, []uint64{1<<32 | afInet, sockStream, 0}, allow, eperm},
		{"udp", testArch.audit, 41, []uint64{afInet, 2, 0}, eperm, eperm},
		{"udp6", testArch.audit, 41, []uint64{afInet6, 2 | sockCloexec, 0}, eperm, eperm},
		{"raw", testArch.audit, 41, []uint64{afInet, 3, 1}, eperm, eperm},
		{"sctp stream", testArch.audit, 41, []uint64{afInet, sockStream, 132}, eperm, eperm},
		{"mptcp", testArch.audit, 41, []uint64{afInet6, sockStream, 262}, eperm, eperm},
		{"seqpacket", testArch.audit, 41, []uint64{afInet, 5, 0}, eperm, eperm},
		{"netlink", testArch.audit, 41, []uint64{16, 3, 0}, eperm, eperm},
		{"packet", testArch.audit, 41, []uint64{17, 3, 0}, eperm, eperm},
		{"vsock", testArch.audit, 41, []uint64{40, sockStream, 0}, eperm, eperm},
	}
	for _, tcp := range []bool{true, false} {
		raw, err := seccompProgram(testArch, tcp)
		if err != nil {
			t.Fatal(err)
		}
		var ins []bpf.Instruction
		for _, r := range raw {
			ins = append(ins, r.Disassemble())
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatalf("tcp=%v: %v", tcp, err)
		}
		for _, tt := range tests {
			got, err := vm.Run(seccompData(tt.arch, tt.nr, tt.args...))
			want := tt.want
			if tcp {
				want = tt.tcp
			}
			if err != nil || uint32(got) != want {
				t.Errorf("tcp=%v %s: got %#x (%v), want %#x", tcp, tt.name, got, err, want)
			}
		}
	}
}
