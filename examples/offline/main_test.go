package main

import (
	"os"
	"testing"
)

// TestOfflineLeavesHomeAlone: the example runs end to end and writes
// nothing under the user's home (no transcript in ~/.claude).
func TestOfflineLeavesHomeAlone(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	main()
	entries, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the example wrote %s into HOME", e.Name())
	}
}
