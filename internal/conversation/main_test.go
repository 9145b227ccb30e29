package conversation_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests a home directory of their own, so settings files
// and transcripts of the machine's user neither leak in nor get written.
func TestMain(m *testing.M) {
	// Many tests run sessions in bypassPermissions, and CI runs them as
	// root, which agentloop refuses unless IS_SANDBOX is exactly 1
	// (bypass_root.go): set it to 1 for the whole run, whatever the
	// environment had (unset, or another value such as "yes"). Tests of
	// the refusal clear it themselves.
	os.Setenv("IS_SANDBOX", "1")
	home, err := os.MkdirTemp("", "agentloop-test-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("CLAUDE_CONFIG_DIR")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
