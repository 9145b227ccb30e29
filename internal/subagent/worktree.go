package subagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/tools"
)

// WorktreesDir is where worktrees are made, relative to the top of the
// repository; the permission layer does not protect it as it protects the
// rest of .claude.
const WorktreesDir = ".claude/worktrees"

// ErrNotRepository reports a worktree asked for outside a git repository.
var ErrNotRepository = errors.New("not inside a git repository")

// Worktree is a git worktree made for one subagent: a new branch from the
// repository's HEAD, checked out under WorktreesDir.
type Worktree struct {
	// Root is the top of the repository, Path the worktree, Branch its
	// branch, Base the commit it started from.
	Root, Path, Branch, Base string
	// Cwd is the directory in the worktree that matches the directory the
	// worktree was asked for from.
	Cwd     string
	environ []string
}

// NewWorktree makes a worktree named name for the repository that holds
// cwd, running git with environ (hardened as the tools harden it). It
// fails with ErrNotRepository outside a repository, and when the
// repository has no commit yet.
func NewWorktree(ctx context.Context, cwd, name string, environ []string) (*Worktree, error) {
	w := &Worktree{environ: tools.GitEnv(environ)}
	root, err := w.git(ctx, cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%v)", ErrNotRepository, cwd, err)
	}
	w.Root = root
	if w.Base, err = w.git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return nil, fmt.Errorf("the repository %s has no commit to branch from: %w", root, err)
	}
	w.Path = filepath.Join(root, filepath.FromSlash(WorktreesDir), name)
	w.Branch = "worktree-" + name
	if _, err := w.git(ctx, root, "worktree", "add", "-b", w.Branch, "--", w.Path, w.Base); err != nil {
		return nil, fmt.Errorf("creating the worktree %s: %w", w.Path, err)
	}
	w.Cwd = w.Path
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		if rel, err := filepath.Rel(root, real); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			w.Cwd = filepath.Join(w.Path, rel)
		}
	}
	return w, nil
}

// Changed reports whether the worktree holds anything the branch point did
// not: uncommitted or untracked files, or new commits.
func (w *Worktree) Changed(ctx context.Context) (bool, error) {
	st, err := w.git(ctx, w.Path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return false, err
	}
	head, err := w.git(ctx, w.Path, "rev-parse", "HEAD")
	if err != nil {
		return false, err
	}
	return st != "" || head != w.Base, nil
}

// Finish removes the worktree and its branch when nothing changed in it,
// and reports whether it was kept. A worktree whose state cannot be read is
// kept: nothing is deleted on a guess.
func (w *Worktree) Finish(ctx context.Context) (kept bool, err error) {
	changed, err := w.Changed(ctx)
	if err != nil || changed {
		return true, err
	}
	if _, err := w.git(ctx, w.Root, "worktree", "remove", "--force", "--", w.Path); err != nil {
		return true, fmt.Errorf("removing the worktree %s: %w", w.Path, err)
	}
	if _, err := w.git(ctx, w.Root, "branch", "-D", "--", w.Branch); err != nil {
		return false, fmt.Errorf("deleting the branch %s: %w", w.Branch, err)
	}
	return false, nil
}

// git runs git in dir and returns its trimmed stdout.
func (w *Worktree) git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(w.environ, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := procguard.Start(cmd) // a cloned repository's git config may run code
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return strings.TrimSpace(out.String()), nil
}
