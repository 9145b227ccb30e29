package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestBuiltinShared: Builtin hands every caller the same immutable
// instance of a built-in tool, which describes itself as a fresh one does.
func TestBuiltinShared(t *testing.T) {
	for _, name := range Names() {
		a, ok := Builtin(name)
		if !ok {
			t.Fatalf("Builtin(%q) not found", name)
		}
		b, _ := Builtin(name)
		if a != b {
			t.Errorf("Builtin(%q) built a second instance", name)
		}
		if err := tool.Check(a); err != nil {
			t.Errorf("Builtin(%q): %v", name, err)
		}
		fresh := lookupBuiltin(name).mk()
		if diff := cmp.Diff(fresh.Info(), a.Info()); diff != "" {
			t.Errorf("Builtin(%q).Info() differs from a fresh instance's (-fresh +shared):\n%s", name, diff)
		}
	}
	if _, ok := Builtin("NoSuchTool"); ok {
		t.Error("Builtin found NoSuchTool")
	}
	if !slices.IsSorted(Names()) {
		t.Errorf("the built-in tools are not sorted by name (lookupBuiltin searches them): %v", Names())
	}
}

// TestCleanupRemovesEmptyShellsDir: Cleanup removes the session's
// background-shell directory when it is empty, and leaves it (and what
// is in it) otherwise, since other processes may share it.
func TestCleanupRemovesEmptyShellsDir(t *testing.T) {
	for _, keep := range []bool{false, true} {
		env := &tool.Env{SessionID: fmt.Sprintf("cleanup-test-%d-%t", os.Getpid(), keep), State: &tool.State{}}
		dir := BackgroundShells(env).Dir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if keep {
			if err := os.WriteFile(filepath.Join(dir, "other"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		Cleanup(env)
		_, err := os.Stat(dir)
		if exists := err == nil; exists != keep {
			t.Errorf("non-empty %t: directory exists after Cleanup: %t, want %t", keep, exists, keep)
		}
	}
}
