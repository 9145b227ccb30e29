package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests a home directory of their own.
func TestMain(m *testing.M) {
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
