package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentloop/agentloop/internal/procguard"
)

// runMainEnv, set to 1 in the environment of the test binary, makes it
// the command itself (main with the binary's arguments), so tests can run
// the command as a process without building it.
const runMainEnv = "AGENTLOOP_TEST_RUN_MAIN"

// noProcguardEnv, set to 1 with runMainEnv, runs the command with
// procguard's measures off, so a test can show its attack works without
// them.
const noProcguardEnv = "AGENTLOOP_TEST_NO_PROCGUARD"

// TestMain gives the tests a home directory of their own.
func TestMain(m *testing.M) {
	// Many tests run sessions in bypassPermissions, and CI runs them as
	// root, which agentloop refuses unless IS_SANDBOX is exactly 1
	// (bypass_root.go): set it to 1 for the whole run, whatever the
	// environment had (unset, or another value such as "yes"). Tests of
	// the refusal clear it themselves.
	os.Setenv("IS_SANDBOX", "1")
	// The SDKs set this for every engine they spawn, and most stream-json
	// tests steer by the state lines it asks for; TestNoStateLinesUnasked
	// clears it.
	os.Setenv(envReadsSessionState, "1")
	if os.Getenv(runMainEnv) == "1" {
		if os.Getenv(noProcguardEnv) == "1" {
			procguard.SetDisabledForTest(true) // the mutation check of credentials_e2e_test.go
		}
		main()
	}
	if f := os.Getenv(fakeAPIEnv); f != "" {
		serveCredAPI(f)
	}
	home, err := os.MkdirTemp("", "agentloop-cli-test-home")
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
