package main

import (
	"os"
	"testing"
)

// TestMain runs the tests as sdkcompare.sh runs the benchmark: the
// sessions bypass permissions, which agentloop refuses to a process
// running as root unless IS_SANDBOX says the machine is disposable.
func TestMain(m *testing.M) {
	if os.Getenv("IS_SANDBOX") != "1" {
		os.Setenv("IS_SANDBOX", "1")
	}
	os.Exit(m.Run())
}
