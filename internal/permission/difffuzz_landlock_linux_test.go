//go:build linux

package permission

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Landlock system calls and access rights (uapi/linux/landlock.h); the
// numbers are the same on every architecture.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	llCreateRulesetVersion = 1
	llRulePathBeneath      = 1

	llWriteFile  = 1 << 1
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llTruncate   = 1 << 14 // ABI 3

	prSetNoNewPrivs = 38
)

// confineWrites restricts the calling OS thread, and the programs it
// executes, to writing beneath the given directories: the differential
// fuzzer runs command lines in real bash, and a checker bug must not let
// one of them change anything outside its throwaway directory. The caller
// must have locked the goroutine to its thread and must exec right after.
func confineWrites(writable ...string) error {
	abi, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, llCreateRulesetVersion)
	if errno != 0 {
		return fmt.Errorf("landlock unavailable: %w", errno)
	}
	handled := uint64(llWriteFile | llRemoveDir | llRemoveFile | llMakeChar | llMakeDir | llMakeReg | llMakeSock |
		llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 3 {
		handled |= llTruncate
	}
	attr := struct{ handledFS uint64 }{handled}
	fd, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))
	for _, dir := range writable {
		allowed := handled
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			allowed &= llWriteFile | llTruncate // rights that apply to a file
		}
		dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", dir, err)
		}
		rule := struct {
			allowed uint64
			parent  int32
			_       int32
		}{allowed: allowed, parent: int32(dfd)}
		_, _, errno = syscall.RawSyscall6(sysLandlockAddRule, fd, llRulePathBeneath, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		syscall.Close(dfd)
		runtime.KeepAlive(rule)
		if errno != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", dir, errno)
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(no_new_privs): %w", errno)
	}
	if _, _, errno := syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}
