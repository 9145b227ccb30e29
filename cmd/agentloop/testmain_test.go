package main

import (
	"fmt"
	"os"
	"testing"
)

// runMainEnv, set to 1 in the environment of the test binary, makes it
// the command itself (main with the binary's arguments), so tests can run
// the command as a process without building it.
const runMainEnv = "AGENTLOOP_TEST_RUN_MAIN"

// TestMain gives the tests a home directory of their own.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
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
