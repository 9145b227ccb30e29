package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLookBashFollowsPath checks that the cached bash location is used only
// while PATH is unchanged and the file is still there.
func TestLookBashFollowsPath(t *testing.T) {
	mk := func() string {
		dir := t.TempDir()
		p := filepath.Join(dir, "bash")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := mk(), mk()
	t.Setenv("PATH", filepath.Dir(a))
	for range 2 {
		if got, err := lookBash(); err != nil || got != a {
			t.Fatalf("lookBash() = %q, %v; want %q", got, err, a)
		}
	}
	t.Setenv("PATH", filepath.Dir(b)+string(os.PathListSeparator)+filepath.Dir(a))
	if got, err := lookBash(); err != nil || got != b {
		t.Fatalf("after PATH changed: lookBash() = %q, %v; want %q", got, err, b)
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if got, err := lookBash(); err != nil || got != a {
		t.Fatalf("after %s was removed: lookBash() = %q, %v; want %q", b, got, err, a)
	}
	if err := os.Chmod(a, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := lookBash(); err == nil {
		t.Fatalf("with no executable bash on PATH: lookBash() = %q, want an error", got)
	}
}
