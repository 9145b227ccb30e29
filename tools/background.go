package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/internal/taskline"
	"github.com/agentloop/agentloop/tool"
)

// Errors of [Shells].
var (
	// ErrNoShell reports an ID that names no background shell of the
	// session.
	ErrNoShell = errors.New("no such background shell")
	// ErrShellNotRunning reports a background shell that has already
	// exited or been stopped.
	ErrShellNotRunning = errors.New("background shell is not running")
)

// Shells is the registry of one session's background shells: commands the
// Bash tool started with run_in_background. Each writes its stdout and
// stderr to files in a directory of the session under os.TempDir
// (agentloop-<session>/<id>.stdout and .stderr), which stay readable after
// it ends. A shell runs until it exits, is stopped, or its lifetime (the
// call's timeout, default 30 minutes, at most 2 hours) is over.
//
// Methods are safe for concurrent use. Hosts should call [Shells.StopAll]
// or [Shells.Close] when the session ends; nothing stops the shells
// otherwise.
type Shells struct {
	session string
	// named is set once Dir or TempDir has handed out a path: until then
	// nothing of this process can have made the directories, and Close
	// need not look for them (most sessions never start a command).
	named atomic.Bool

	mu      sync.Mutex
	next    int
	shells  map[string]*bgShell
	others  []OtherTasks // see Attach
	notices []string     // see TakeNotices
}

// ShellInfo describes a background shell.
type ShellInfo struct {
	ID         string
	Command    string
	Dir        string // working directory
	StdoutPath string
	StderrPath string
	Started    time.Time
	Running    bool
	ExitCode   int  // meaningful once Running is false
	Stopped    bool // ended by Stop, StopAll or its lifetime
}

type bgShell struct {
	info ShellInfo // ID, Command, Dir, paths and Started never change
	pid  int
	done chan struct{} // closed once the shell has exited

	// The call that started the shell and its description, for the
	// notice of its end; they never change.
	toolUseID, description string
	// runID names the run on the shell's task lines; emit puts them into
	// the session's stream (nil: none). They never change.
	runID string
	emit  TaskEmitter

	// Guarded by Shells.mu.
	exitCode int
	stopped  bool
	timer    *time.Timer
}

// bgKey is the key of a session's Shells in tool.State.
type bgKey struct{}

// bgFallback serves calls made without a session state.
var bgFallback = &Shells{}

// BackgroundShells returns the session's background shells, creating the
// registry on first use. Without a session state (env or env.State nil) it
// returns a registry shared by all such callers.
func BackgroundShells(env *tool.Env) *Shells {
	if env == nil || env.State == nil {
		return bgFallback
	}
	return env.State.Load(bgKey{}, func() any { return newShells(env.SessionID) }).(*Shells)
}

func newShells(session string) *Shells {
	return &Shells{session: session} // shells is made by the first start: most sessions start none
}

// Dir is the directory that holds the output files of the session's
// background shells. It may not exist yet.
func (s *Shells) Dir() string {
	s.named.Store(true)
	return s.dir()
}

func (s *Shells) dir() string {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s.session)
	if name == "" || strings.Trim(name, ".") == "" {
		name = "nosession"
	}
	return filepath.Join(os.TempDir(), "agentloop-"+name)
}

// TempDir is the session's own temporary directory, inside Dir: the
// TMPDIR of its sandboxed commands, where the sandbox lets them write.
// It may not exist yet; Close removes it with whatever the commands left
// in it.
func (s *Shells) TempDir() string { return filepath.Join(s.Dir(), "tmp") }

// start runs command in the background with bash at shell, in dir, for at
// most lifetime, confined by policy when it is not nil; toolUseID and
// description (of the call that started it) go into the notice of its end,
// and its task lines go through emit when it is not nil.
func (s *Shells) start(environ []string, shell, dir, command string, lifetime time.Duration, policy *sandbox.Policy, toolUseID, description string, emit TaskEmitter) (ShellInfo, error) {
	out, errf, id, err := s.createFiles()
	if err != nil {
		return ShellInfo{}, err
	}
	cmd := bashCommand(environ, shell, dir, command)
	cmd.Stdout, cmd.Stderr = out, errf
	err = bashStart(cmd, policy)
	out.Close()
	errf.Close()
	if err != nil {
		os.Remove(out.Name())
		os.Remove(errf.Name())
		return ShellInfo{}, err
	}
	sh := &bgShell{
		info: ShellInfo{ID: id, Command: command, Dir: dir, StdoutPath: out.Name(),
			StderrPath: errf.Name(), Started: time.Now()},
		pid:      cmd.Process.Pid,
		done:     make(chan struct{}),
		exitCode: -1,

		toolUseID: toolUseID, description: description, runID: taskline.NewRunID(), emit: emit,
	}
	s.mu.Lock()
	if s.shells == nil {
		s.shells = map[string]*bgShell{}
	}
	s.shells[id] = sh
	sh.timer = time.AfterFunc(lifetime, func() { s.stop(sh) })
	s.mu.Unlock()
	s.startedLines(sh) // before wait can tell its end
	go s.wait(sh, cmd)
	return sh.snapshot(s), nil
}

// createFiles reserves the next free ID and creates its output files.
func (s *Shells) createFiles() (out, errf *os.File, id string, err error) {
	dir := s.Dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, "", err
	}
	if fi, err := os.Lstat(dir); err != nil {
		return nil, nil, "", err
	} else if !fi.IsDir() || !bashOwnedByMe(fi) {
		return nil, nil, "", fmt.Errorf("%s is not a directory of this user", dir)
	}
	for range 10000 {
		s.mu.Lock()
		s.next++
		id = "bash_" + strconv.Itoa(s.next)
		s.mu.Unlock()
		out, err = os.OpenFile(filepath.Join(dir, id+".stdout"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue // left by another process with the same session
		}
		if err != nil {
			return nil, nil, "", err
		}
		errf, err = os.OpenFile(filepath.Join(dir, id+".stderr"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			out.Close()
			os.Remove(out.Name())
			return nil, nil, "", err
		}
		return out, errf, id, nil
	}
	return nil, nil, "", fmt.Errorf("no free background shell ID in %s", dir)
}

func (s *Shells) wait(sh *bgShell, cmd *exec.Cmd) {
	_ = cmd.Wait() // the status is read from cmd.ProcessState
	s.mu.Lock()
	sh.exitCode = bashExitCode(cmd.ProcessState)
	sh.timer.Stop()
	s.notices = append(s.notices, sh.notice())
	status, summary := sh.outcome()
	s.mu.Unlock()
	close(sh.done)
	s.endedLines(sh, status, summary)
}

// TakeNotices returns, and forgets, the notices of the shells that ended
// since the last call: one <task-notification> text each, in the
// reference's form, for the model (the session's main loop gives them to
// it with the next request).
func (s *Shells) TakeNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices
	s.notices = nil
	return out
}

// outcome is how the shell ended, as its notice and its task lines tell
// it: a status (completed, failed or killed) and a summary. s.mu is held.
func (sh *bgShell) outcome() (status, summary string) {
	what := sh.what()
	switch {
	case sh.stopped:
		return "killed", fmt.Sprintf("Background command %q was stopped", what)
	case sh.exitCode != 0:
		return "failed", fmt.Sprintf("Background command %q failed with exit code %d", what, sh.exitCode)
	}
	return "completed", fmt.Sprintf("Background command %q completed (exit code %d)", what, sh.exitCode)
}

// notice is the text that tells the model the shell ended. s.mu is held.
func (sh *bgShell) notice() string {
	status, summary := sh.outcome()
	var b strings.Builder
	b.WriteString("<task-notification>\n")
	fmt.Fprintf(&b, "<task-id>%s</task-id>\n", sh.info.ID)
	if sh.toolUseID != "" {
		fmt.Fprintf(&b, "<tool-use-id>%s</tool-use-id>\n", sh.toolUseID)
	}
	fmt.Fprintf(&b, "<output-file>%s</output-file>\n<error-file>%s</error-file>\n", sh.info.StdoutPath, sh.info.StderrPath)
	fmt.Fprintf(&b, "<status>%s</status>\n<summary>%s</summary>\n</task-notification>", status, summary)
	return b.String()
}

func (sh *bgShell) running() bool {
	select {
	case <-sh.done:
		return false
	default:
		return true
	}
}

// snapshot returns the shell's current state. s.mu must not be held.
func (sh *bgShell) snapshot(s *Shells) ShellInfo {
	info := sh.info
	s.mu.Lock()
	info.Running = sh.running()
	info.ExitCode = sh.exitCode
	info.Stopped = sh.stopped
	s.mu.Unlock()
	return info
}

func (s *Shells) lookup(id string) (*bgShell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shells[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoShell, id)
	}
	return sh, nil
}

// Wait blocks until the shell id has ended (its notice is then queued, see
// TakeNotices) or ctx is done.
func (s *Shells) Wait(ctx context.Context, id string) error {
	sh, err := s.lookup(id)
	if err != nil {
		return err
	}
	select {
	case <-sh.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Info describes the shell with the given ID.
func (s *Shells) Info(id string) (ShellInfo, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return ShellInfo{}, err
	}
	return sh.snapshot(s), nil
}

// List describes all the session's background shells, in the order they
// were started.
func (s *Shells) List() []ShellInfo {
	s.mu.Lock()
	all := make([]*bgShell, 0, len(s.shells))
	for _, sh := range s.shells {
		all = append(all, sh)
	}
	s.mu.Unlock()
	sortShells(all)
	infos := make([]ShellInfo, len(all))
	for i, sh := range all {
		infos[i] = sh.snapshot(s)
	}
	return infos
}

// Output returns what the shell has written so far, each stream trimmed and
// capped as the Bash tool shows it to the model, whether it still runs, and
// its exit code (meaningful once it no longer runs; 128+N when signal N
// ended it). Reading costs bounded memory however large the files are.
func (s *Shells) Output(id string) (stdout, stderr string, running bool, exitCode int, err error) {
	sh, err := s.lookup(id)
	if err != nil {
		return "", "", false, 0, err
	}
	info := sh.snapshot(s)
	if stdout, err = bgRead(info.StdoutPath, bashLeadBlankLines); err != nil {
		return "", "", info.Running, info.ExitCode, err
	}
	if stderr, err = bgRead(info.StderrPath, bashLeadSpace); err != nil {
		return "", "", info.Running, info.ExitCode, err
	}
	return stdout, stderr, info.Running, info.ExitCode, nil
}

func bgRead(path string, lead bashLead) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	c := newBashCapture(bashMaxOutputChars, lead)
	if _, err := io.Copy(c, f); err != nil {
		return "", err
	}
	return c.text(), nil
}

// Stop ends the shell's process group (SIGTERM, then SIGKILL after a short
// grace) and waits for the shell to exit. It returns an error wrapping
// ErrNoShell for an unknown ID and ErrShellNotRunning for a shell that has
// already ended.
func (s *Shells) Stop(id string) error {
	sh, err := s.lookup(id)
	if err != nil {
		return err
	}
	if !s.stop(sh) {
		return fmt.Errorf("%w: %s", ErrShellNotRunning, id)
	}
	return nil
}

// stop ends sh if it still runs and reports whether it did.
func (s *Shells) stop(sh *bgShell) bool {
	s.mu.Lock()
	if !sh.running() || sh.stopped {
		s.mu.Unlock()
		<-sh.done
		return false
	}
	sh.stopped = true
	s.mu.Unlock()
	bashStop(sh.pid, sh.done)
	<-sh.done
	return true
}

// StopAll stops every background shell that still runs, concurrently, and
// returns once they have all exited.
func (s *Shells) StopAll() {
	s.mu.Lock()
	all := make([]*bgShell, 0, len(s.shells))
	for _, sh := range s.shells {
		all = append(all, sh)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sh := range all {
		wg.Go(func() { s.stop(sh) })
	}
	wg.Wait()
}

// Close stops every background shell and removes their output files; it
// closes the attached registries first (see Attach). Once Dir or TempDir
// has named them, it also removes the session's temporary directory and,
// when empty, its output directory; a session that never named them
// leaves them to whoever made them.
func (s *Shells) Close() error {
	var errs []error
	for _, o := range s.attached() {
		if err := o.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.StopAll()
	s.mu.Lock()
	var paths []string
	for _, sh := range s.shells {
		paths = append(paths, sh.info.StdoutPath, sh.info.StderrPath)
	}
	s.mu.Unlock()
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if !s.named.Load() {
		// No path was handed out, so no command of this session made
		// them: three system calls saved for the many sessions that
		// never ran one.
		return errors.Join(errs...)
	}
	// The session's temporary directory is its own; left behind, one per
	// session that ran a sandboxed command piled up in the system's
	// temporary directory (and a directory of thousands of entries is more
	// than the sandbox can carve a denied path out of).
	dir := s.dir()
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		// Named but never made (the sandbox's policy names it before
		// any command runs): one lstat instead of three failing calls.
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		errs = append(errs, fmt.Errorf("removing the session's temporary directory: %w", err))
	}
	// Only when empty: other processes may share it. rmdir alone, where
	// os.Remove would try unlink first: most sessions never made it.
	_ = syscall.Rmdir(dir)
	return errors.Join(errs...)
}

// sortShells orders shells by when they started.
func sortShells(all []*bgShell) {
	sort.Slice(all, func(i, j int) bool {
		if !all[i].info.Started.Equal(all[j].info.Started) {
			return all[i].info.Started.Before(all[j].info.Started)
		}
		return all[i].info.ID < all[j].info.ID
	})
}
