package conversation

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentloop/agentloop/internal/permission"
)

// ErrBypassAsRoot is matched (errors.Is) by the error of a session that
// would run in bypassPermissions while the process is root (effective
// uid 0) and IS_SANDBOX is not "1": starting in that mode
// (Options.PermissionMode, the settings' permissions.defaultMode, the
// CLI's --dangerously-skip-permissions) fails, and a later switch to it
// (Client.SetPermissionMode, set_permission_mode, a setMode permission
// update) is refused and changes nothing. Every tool call of a root
// session without prompts could change anything on the machine; inside a
// sandbox or throwaway container, where that is acceptable, set
// IS_SANDBOX=1 in agentloop's environment.
var ErrBypassAsRoot = errors.New("bypassPermissions refused: the process runs as root")

// EnvIsSandbox names the variable that, set to "1", allows
// bypassPermissions to a process running as root. It is read from the
// process environment only: a settings file's env cannot set it.
const EnvIsSandbox = "IS_SANDBOX"

// processIdentity returns the effective user id and the value of
// IS_SANDBOX. Tests replace it to act as root without being root.
var processIdentity = func() (euid int, isSandbox string) {
	return os.Geteuid(), os.Getenv(EnvIsSandbox)
}

// CheckBypassAsRoot reports whether a process with effective user id
// euid and IS_SANDBOX value isSandbox may run in bypassPermissions: nil
// unless euid is 0 and isSandbox is not "1", else an error wrapping
// [ErrBypassAsRoot]. (A negative euid, as on Windows, is not root.) The
// CLI uses it to refuse --dangerously-skip-permissions before starting.
func CheckBypassAsRoot(euid int, isSandbox string) error {
	if euid != 0 || isSandbox == "1" {
		return nil
	}
	return fmt.Errorf("%w (effective uid 0) and %s is not 1; run as an unprivileged user, or set %s=1 if this is a sandbox or disposable container",
		ErrBypassAsRoot, EnvIsSandbox, EnvIsSandbox)
}

// withBypassAsRoot adds bypassPermissions to the checker's disabled modes
// when the process may not use it (CheckBypassAsRoot), so that the
// session can neither start in it nor switch to it later. The map may be
// nil; the result is a new map only when it must be.
func withBypassAsRoot(disabled map[permission.Mode]error) map[permission.Mode]error {
	err := CheckBypassAsRoot(processIdentity())
	if err == nil {
		return disabled
	}
	if _, ok := disabled[permission.ModeBypass]; ok {
		return disabled // a settings file turned it off already
	}
	out := make(map[permission.Mode]error, len(disabled)+1)
	for m, e := range disabled {
		out[m] = e
	}
	out[permission.ModeBypass] = err
	return out
}
