package agentloop_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests a home directory of their own, so settings files
// and transcripts of the machine's user neither leak in nor get written.
func TestMain(m *testing.M) {
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
