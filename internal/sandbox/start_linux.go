//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"github.com/agentloop/agentloop/internal/procguard"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// minNetABI is the first Landlock ABI with TCP rules.
const minNetABI = 4

// Available reports the Landlock ABI version of the running kernel, or an
// error wrapping ErrUnavailable when commands cannot be sandboxed here.
// The kernel is asked once per process: what it answers cannot change
// while the process runs, and every session asks.
func Available() (abi int, err error) { return available() }

var available = sync.OnceValues(landlockABI)

// landlockABI asks the kernel for Available's answer.
func landlockABI() (abi int, err error) {
	if nativeArch == nil {
		return 0, fmt.Errorf("%w: no seccomp filter for %s", ErrUnavailable, runtime.GOARCH)
	}
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, fmt.Errorf("%w: the kernel has no Landlock (%v)", ErrUnavailable, errno)
	}
	return int(v), nil
}

// filters caches the assembled seccomp programs, one per socketRule.
var filters struct {
	once sync.Once
	prog [numSocketRules][]unix.SockFilter
	err  error
}

func filterFor(rule socketRule) ([]unix.SockFilter, error) {
	filters.once.Do(func() {
		for r := range numSocketRules {
			raw, err := seccompProgram(*nativeArch, r)
			if err != nil {
				filters.err = err
				return
			}
			filters.prog[r] = sockFilter(raw)
		}
	})
	if filters.err != nil {
		return nil, filters.err
	}
	return filters.prog[rule], nil
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
	procguard.ProtectProcess()
	if p.needsNetRules() && abi < minNetABI {
		return fmt.Errorf("%w: Landlock ABI %d has no TCP rules (need %d)", ErrUnavailable, abi, minNetABI)
	}
	filter, err := filterFor(p.sockets())
	if err != nil {
		return err
	}
	rp := p.resolved()
	var mounts *mountPlan
	var holes []string
	if ok, _ := MetadataProtected(); ok && !testNoMountStep {
		if mounts, err = planMounts(rp); err != nil {
			return err
		}
		holes = mounts.carved
	} else if holes, err = landlockHoles(rp); err != nil {
		return err
	}
	// The placeholders are made before the ruleset is built, from the
	// tree as it will be when the command starts.
	if mounts != nil {
		if err := mounts.acquirePlaceholders(); err != nil {
			return err
		}
	}
	started := false
	defer func() {
		if mounts != nil && !started {
			mounts.releaseNow()
		}
	}()
	ruleset, err := rulesetFor(abi, rp, holes)
	if err != nil {
		return err
	}
	defer unix.Close(ruleset)
	if cmd.SysProcAttr != nil {
		// The parent-death signal fires when the starting thread exits,
		// and that thread is discarded right after the start.
		cmd.SysProcAttr.Pdeathsig = 0
	}
	p.unsetEnv(cmd) // unsetenv.go
	if env := p.Env(); len(env) > 0 {
		if cmd.Env == nil {
			cmd.Env = cmd.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
	}
	done := make(chan error, 1)
	go onSpareThread(func() error { return restrictThreadAndStart(cmd, ruleset, filter, mounts) }, done, 0)
	err = <-done
	if mounts != nil {
		if err == nil {
			started = true
			releaseAfterExit(cmd.Process.Pid, mounts.ns, mounts.holdFor(mounts.nsKey))
		} else if mounts.ns != nil {
			mounts.ns.Close()
		}
	}
	return err
}

// testNoMountStep switches the mount namespace step off, for the tests'
// mutation checks only.
var testNoMountStep bool

// maxThreadTries bounds how often onSpareThread hands the work on when it
// finds itself on the main thread.
const maxThreadTries = 8

// onSpareThread locks its goroutine's OS thread, runs fn on it (which
// restricts the thread and starts a command from it) and sends fn's
// outcome to done. It never unlocks the thread: when the goroutine
// returns, the runtime terminates the thread, restriction and all. The
// main thread is the exception, because the runtime cannot terminate it
// (it parks it for good instead); found there, the goroutine starts a
// successor, which cannot be scheduled on the main thread while this one
// holds it, and releases the main thread only once the successor has
// locked a thread of its own.
func onSpareThread(fn func() error, done chan<- error, try int) {
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
			onLockedThread(fn, done, try+1)
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	done <- fn()
}

// onLockedThread is onSpareThread for a goroutine that has already locked
// its thread.
func onLockedThread(fn func() error, done chan<- error, try int) {
	if unix.Gettid() == unix.Getpid() {
		// Cannot happen (the main thread was held), but never restrict it.
		runtime.UnlockOSThread()
		onSpareThread(fn, done, try)
		return
	}
	done <- fn()
}

// restrictThreadAndStart confines the calling (locked) thread and starts
// cmd from it. The mount namespace step (mounts, nil when unavailable)
// comes first: Landlock forbids changing mounts once the thread is
// restricted, and the seccomp filter refuses the system calls.
func restrictThreadAndStart(cmd *exec.Cmd, ruleset int, filter []unix.SockFilter, mounts *mountPlan) error {
	if mounts != nil {
		if err := mounts.apply(); err != nil {
			return fmt.Errorf("sandbox: mount namespace: %w", err)
		}
	}
	// After the mounts, which need CAP_SYS_ADMIN: the command gets none
	// of the capabilities that read other processes' memory.
	if err := procguard.DropThreadCaps(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
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
