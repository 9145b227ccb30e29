//go:build linux

package procguard

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// dropped are the capabilities a started process may not have: each
// reads another process's memory or the kernel's (ptrace and /proc,
// /dev/mem and /proc/kcore, modules, BPF, perf events, kexec), or changes
// the mounts and namespaces the sandbox relies on.
var dropped = []int{
	unix.CAP_SYS_PTRACE,
	unix.CAP_SYS_ADMIN,
	unix.CAP_SYS_RAWIO,
	unix.CAP_SYS_MODULE,
	unix.CAP_SYS_BOOT,
	unix.CAP_PERFMON,
	unix.CAP_BPF,
}

// ProtectProcess makes this process non-dumpable, once: its /proc
// entries, ptrace and core dumps are then out of reach of any process
// without CAP_SYS_PTRACE. A process that agentloop starts becomes
// dumpable again when it executes its program, as usual.
func ProtectProcess() {
	if disabled.Load() {
		return
	}
	protectOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) })
}

var protectOnce sync.Once

// Protected reports whether this process is non-dumpable.
func Protected() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v == 0
}

// DropThreadCaps removes the capabilities a started process may not have
// from the calling thread, which must be locked (runtime.LockOSThread) and
// never unlocked: the change cannot be undone. Capabilities the thread
// does not hold are not an error; nor is a bounding set it may not change
// (without CAP_SETPCAP, which an unprivileged thread lacks and so cannot
// hand on either).
func DropThreadCaps() error {
	if disabled.Load() {
		return nil
	}
	for _, c := range dropped {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil &&
			!errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("procguard: dropping capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("procguard: capget: %w", err)
	}
	for _, c := range dropped {
		bit := uint32(1) << (uint(c) % 32)
		d := &data[c/32]
		d.Effective &^= bit
		d.Permitted &^= bit
		d.Inheritable &^= bit
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("procguard: capset: %w", err)
	}
	return nil
}

// launchers returns the number of launching threads: one per processor
// the Go scheduler uses, at least 2 and at most 8, so that concurrent
// sessions start their commands in parallel as before.
func launchers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

var pool struct {
	once sync.Once
	work chan func()
	err  error // why no launching thread could be prepared
}

// run calls fn on a launching thread.
func run(fn func() error) error {
	pool.once.Do(startPool)
	if pool.err != nil {
		return pool.err
	}
	done := make(chan error, 1)
	pool.work <- func() { done <- fn() }
	return <-done
}

// startPool starts the launching threads and waits until they are ready.
func startPool() {
	pool.work = make(chan func())
	n := launchers()
	ready := make(chan error, n)
	for range n {
		go launcher(ready, 0)
	}
	var errs []error
	for range n {
		if err := <-ready; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == n {
		pool.err = errors.Join(errs...)
	}
}

// maxThreadTries bounds how often launcher hands the work on when it
// finds itself on the main thread.
const maxThreadTries = 8

// launcher locks its goroutine to a thread other than the main thread
// (whose capabilities govern signals and the runtime's own needs), drops
// the capabilities there, reports on ready and then serves pool.work for
// the life of the process.
func launcher(ready chan<- error, try int) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		if try >= maxThreadTries {
			runtime.UnlockOSThread()
			ready <- errors.New("procguard: no thread other than the main thread to start processes from")
			return
		}
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			serve(ready)
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	serve(ready)
}

// serve drops the locked thread's capabilities and runs the work sent to
// the pool, forever.
func serve(ready chan<- error) {
	if err := DropThreadCaps(); err != nil {
		ready <- err
		return // the goroutine ends locked: the runtime discards the thread
	}
	ready <- nil
	for fn := range pool.work {
		fn()
	}
}
