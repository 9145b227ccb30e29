package subagent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func testRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestWorktree(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		change   func(t *testing.T, w *Worktree)
		wantKept bool
	}{
		{name: "clean", wantKept: false},
		{name: "untracked file", wantKept: true, change: func(t *testing.T, w *Worktree) {
			if err := os.WriteFile(filepath.Join(w.Cwd, "new"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "new commit", wantKept: true, change: func(t *testing.T, w *Worktree) {
			if out, err := exec.Command("git", "-C", w.Path, "-c", "user.name=t", "-c", "user.email=t@example.com",
				"commit", "-q", "--allow-empty", "-m", "more").CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := testRepo(t)
			w, err := NewWorktree(ctx, filepath.Join(repo, "sub"), "agent-x", nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(repo, ".claude", "worktrees", "agent-x"); w.Path != want {
				t.Errorf("Path = %s, want %s", w.Path, want)
			}
			if want := filepath.Join(w.Path, "sub"); w.Cwd != want {
				t.Errorf("Cwd = %s, want %s (the same subdirectory)", w.Cwd, want)
			}
			if tc.change != nil {
				tc.change(t, w)
			}
			kept, err := w.Finish(ctx)
			if err != nil || kept != tc.wantKept {
				t.Fatalf("Finish = %v, %v; want kept %v", kept, err, tc.wantKept)
			}
			_, statErr := os.Stat(w.Path)
			br, _ := exec.Command("git", "-C", repo, "branch", "--list", w.Branch).Output()
			if exists := statErr == nil && len(br) > 0; exists != tc.wantKept {
				t.Errorf("worktree exists %v (branch %q), want %v", statErr == nil, br, tc.wantKept)
			}
		})
	}
}

func TestWorktreeNotRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	_, err := NewWorktree(context.Background(), t.TempDir(), "agent-x", nil)
	if !errors.Is(err, ErrNotRepository) {
		t.Fatalf("err = %v, want ErrNotRepository", err)
	}
}
