//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// minNetABI is the first Landlock ABI with TCP rules.
const minNetABI = 4

// Available reports the Landlock ABI version of the running kernel, or an
// error wrapping ErrUnavailable when commands cannot be sandboxed here.
func Available() (abi int, err error) {
	if nativeArch == nil {
		return 0, fmt.Errorf("%w: no seccomp filter for %s", ErrUnavailable, runtime.GOARCH)
	}
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, fmt.Errorf("%w: the kernel has no Landlock (%v)", ErrUnavailable, errno)
	}
	return int(v), nil
}

// filters caches the assembled seccomp programs, with and without TCP.
var filters struct {
	once sync.Once
	prog [2][]unix.SockFilter
	err  error
}

func filterFor(tcp bool) ([]unix.SockFilter, error) {
	filters.once.Do(func() {
		for i, tcp := range []bool{false, true} {
			raw, err := seccompProgram(*nativeArch, tcp)
			if err != nil {
				filters.err = err
				return
			}
			filters.prog[i] = sockFilter(raw)
		}
	})
	if filters.err != nil {
		return nil, filters.err
	}
	if tcp {
		return filters.prog[1], nil
	}
	return filters.prog[0], nil
}

func sockFilter(raw []bpf.RawInstruction) []unix.SockFilter {
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out
}

// Start starts cmd confined by p, as exec.Cmd.Start does. The policy's
// environment ([Policy.Env]) is appended to cmd.Env (to the process's
// environment when cmd.Env is nil). Errors wrap ErrUnavailable when the
// kernel cannot enforce p; nothing is started then.
//
// Only the child is confined: the restriction is applied to a locked OS
// thread that the Go runtime destroys afterwards (see the package doc).
func Start(cmd *exec.Cmd, p *Policy) error {
	if err := p.validate(); err != nil {
		return err
	}
	abi, err := Available()
	if err != nil {
		return err
	}
	if p.needsTCP() && abi < minNetABI {
		return fmt.Errorf("%w: Landlock ABI %d has no TCP rules (need %d)", ErrUnavailable, abi, minNetABI)
	}
	filter, err := filterFor(p.needsTCP())
	if err != nil {
		return err
	}
	ruleset, err := rulesetFor(abi, p)
	if err != nil {
		return err
	}
	defer unix.Close(ruleset)
	if cmd.SysProcAttr != nil {
		// The parent-death signal fires when the starting thread exits,
		// and that thread is discarded right after the start.
		cmd.SysProcAttr.Pdeathsig = 0
	}
	if env := p.Env(); len(env) > 0 {
		if cmd.Env == nil {
			cmd.Env = cmd.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
	}
	done := make(chan error, 1)
	go startOnSpareThread(cmd, ruleset, filter, done, 0)
	return <-done
}

// maxThreadTries bounds how often startOnSpareThread hands the work on
// when it finds itself on the main thread.
const maxThreadTries = 8

// startOnSpareThread locks its goroutine's OS thread, restricts it and
// starts cmd from it, sending the outcome to done. It never unlocks the
// thread: when the goroutine returns, the runtime terminates the thread,
// restriction and all. The main thread is the exception, because the
// runtime cannot terminate it (it parks it for good instead); found
// there, the goroutine starts a successor, which cannot be scheduled on
// the main thread while this one holds it, and releases the main thread
// only once the successor has locked a thread of its own.
func startOnSpareThread(cmd *exec.Cmd, ruleset int, filter []unix.SockFilter, done chan<- error, try int) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		if try >= maxThreadTries {
			runtime.UnlockOSThread()
			done <- errors.New("sandbox: no thread other than the main thread to start the command from")
			return
		}
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			startOnLockedThread(cmd, ruleset, filter, done, try+1)
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	done <- restrictThreadAndStart(cmd, ruleset, filter)
}

// startOnLockedThread is startOnSpareThread for a goroutine that has
// already locked its thread.
func startOnLockedThread(cmd *exec.Cmd, ruleset int, filter []unix.SockFilter, done chan<- error, try int) {
	if unix.Gettid() == unix.Getpid() {
		// Cannot happen (the main thread was held), but never restrict it.
		runtime.UnlockOSThread()
		startOnSpareThread(cmd, ruleset, filter, done, try)
		return
	}
	done <- restrictThreadAndStart(cmd, ruleset, filter)
}

// restrictThreadAndStart confines the calling (locked) thread and starts
// cmd from it.
func restrictThreadAndStart(cmd *exec.Cmd, ruleset int, filter []unix.SockFilter) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp: %w", errno)
	}
	runtime.KeepAlive(filter)
	if err := cmd.Start(); err != nil {
		return err
	}
	return nil
}
