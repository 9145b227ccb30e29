package main

import (
	"fmt"
	"os"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/vocab"
)

// processIdentity returns the effective user id and IS_SANDBOX. Tests
// replace it to act as root without being root.
var processIdentity = func() (euid int, isSandbox string) {
	return os.Geteuid(), os.Getenv(agentloop.EnvIsSandbox)
}

// checkBypassAsRoot refuses bypassPermissions asked for on the command
// line (--dangerously-skip-permissions, --permission-mode
// bypassPermissions) when the process runs as root without IS_SANDBOX=1,
// before anything starts. The library refuses it too (a settings
// defaultMode, a later mode switch); this names the flag.
func (c *config) checkBypassAsRoot() error {
	if c.mode != string(vocab.PermissionBypass) {
		return nil
	}
	if err := agentloop.CheckBypassAsRoot(processIdentity()); err != nil {
		flag := "--permission-mode bypassPermissions"
		if c.sdk.skipPermissions {
			flag = "--dangerously-skip-permissions"
		}
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}
