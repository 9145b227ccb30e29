package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/tool"
)

// fakeEditor is a tool.Host keeping text files in memory (an editor's
// buffers) and running commands in a fake terminal.
type fakeEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	reads   []string
	writes  []string
	runs    []tool.TerminalRequest
	// run answers a terminal request; nil answers "ok" with exit code 0.
	run func(ctx context.Context, req tool.TerminalRequest) (tool.TerminalResult, error)
}

func (f *fakeEditor) host() *tool.Host {
	return &tool.Host{
		ReadTextFile: func(_ context.Context, p string) ([]byte, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reads = append(f.reads, p)
			if b, ok := f.buffers[p]; ok {
				return []byte(b), nil
			}
			data, err := os.ReadFile(p)
			return data, err
		},
		WriteTextFile: func(_ context.Context, p string, data []byte) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.writes = append(f.writes, p)
			f.buffers[p] = string(data)
			return nil
		},
		Terminal: func(ctx context.Context, req tool.TerminalRequest) (tool.TerminalResult, error) {
			f.mu.Lock()
			f.runs = append(f.runs, req)
			run := f.run
			f.mu.Unlock()
			if run == nil {
				return tool.TerminalResult{Output: "ok\n", ExitCode: new(int)}, nil
			}
			return run(ctx, req)
		},
	}
}

func newFakeEditor() *fakeEditor { return &fakeEditor{buffers: map[string]string{}} }

// TestHostFiles checks that Read, Edit and Write reach text files through
// the session's Host: an unsaved buffer is what Read shows and what Edit
// changes, and the disk is left alone.
func TestHostFiles(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "a.txt", "on disk\n")
	ed := newFakeEditor()
	ed.buffers[p] = "unsaved line\nsecond\n"
	env := ftEnv(dir)
	env.Host = ed.host()

	r := ftRun(t, Read(), env, map[string]any{"file_path": p})
	if want := "1\tunsaved line\n2\tsecond\n3\t"; r.IsError || ftText(r) != want {
		t.Fatalf("Read = %q (error %v), want %q", ftText(r), r.IsError, want)
	}
	r = ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "unsaved line", "new_string": "edited line"})
	if r.IsError {
		t.Fatalf("Edit: %s", ftText(r))
	}
	r = ftRun(t, Write(), env, map[string]any{"file_path": filepath.Join(dir, "sub", "new.txt"), "content": "fresh\n"})
	if r.IsError {
		t.Fatalf("Write new: %s", ftText(r))
	}
	want := map[string]string{p: "edited line\nsecond\n", filepath.Join(dir, "sub", "new.txt"): "fresh\n"}
	if d := cmp.Diff(want, ed.buffers); d != "" {
		t.Errorf("buffers (-want +got):\n%s", d)
	}
	if data, _ := os.ReadFile(p); string(data) != "on disk\n" {
		t.Errorf("the disk file changed to %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write created the file on disk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); err != nil {
		t.Errorf("Write did not create the parent directory on disk: %v", err)
	}
}

// TestHostFilesStaleness checks that the read-before-edit state judges
// the host's text: a buffer changed behind the model's back makes Edit
// refuse.
func TestHostFilesStaleness(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "a.txt", "x\n")
	ed := newFakeEditor()
	ed.buffers[p] = "one\n"
	env := ftEnv(dir)
	env.Host = ed.host()
	if r := ftRun(t, Read(), env, map[string]any{"file_path": p}); r.IsError {
		t.Fatal(ftText(r))
	}
	ed.buffers[p] = "one changed by the user\n"
	r := ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "one", "new_string": "two"})
	if !r.IsError || !strings.Contains(ftText(r), "changed on disk since you last read it") {
		t.Errorf("Edit of a changed buffer = %q, want a staleness refusal", ftText(r))
	}
}

// TestHostFilesAfterChecks checks that the Host is reached only after the
// tool's own checks: a denied read, a directory and a missing file never
// reach it, and its failure is the model's error.
func TestHostFilesAfterChecks(t *testing.T) {
	dir := ftTempDir(t)
	secret := ftWriteFile(t, dir, "secret.txt", "s\n")
	ed := newFakeEditor()
	env := ftEnv(dir)
	env.Host = ed.host()
	env.ReadDenied = func(_ string, names ...string) bool {
		for _, n := range names {
			if n == secret {
				return true
			}
		}
		return false
	}
	for _, p := range []string{secret, dir, filepath.Join(dir, "missing.txt")} {
		if r := ftRun(t, Read(), env, map[string]any{"file_path": p}); !r.IsError {
			t.Errorf("Read %s succeeded: %s", p, ftText(r))
		}
	}
	if len(ed.reads) != 0 {
		t.Errorf("the host was asked for %q", ed.reads)
	}
	ok := ftWriteFile(t, dir, "ok.txt", "fine\n")
	env.Host.ReadTextFile = func(context.Context, string) ([]byte, error) { return nil, errors.New("buffer gone") }
	r := ftRun(t, Read(), env, map[string]any{"file_path": ok})
	if !r.IsError || !strings.Contains(ftText(r), "buffer gone") {
		t.Errorf("Read with a failing host = %q, want its error", ftText(r))
	}
}

// TestHostTerminal checks Bash in the host's terminal: its output and exit
// status, the request it gets, and the timeout and cancellation.
func TestHostTerminal(t *testing.T) {
	env := bashTestEnv(t)
	ed := newFakeEditor()
	env.Host = ed.host()
	env.Environ = []string{"FOO=bar"}

	ed.run = func(_ context.Context, req tool.TerminalRequest) (tool.TerminalResult, error) {
		return tool.TerminalResult{Output: "from the terminal\n", ExitCode: new(int)}, nil
	}
	got := bashSummary(bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "echo hi", "timeout": 5000}))
	want := bashGot{Text: "from the terminal", Structured: BashResult{Stdout: "from the terminal"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	req := ed.runs[0]
	if req.CallID != "toolu_test" || req.Command != "echo hi" || req.Dir != env.Cwd || req.Timeout != 5*time.Second ||
		!strings.HasSuffix(req.Shell, "bash") || req.OutputLimit != bashMaxOutputChars {
		t.Errorf("request = %+v", req)
	}
	for _, kv := range []string{"FOO=bar", "PAGER=cat", "PWD=" + env.Cwd} {
		if !strings.Contains("\x00"+strings.Join(req.Env, "\x00")+"\x00", "\x00"+kv+"\x00") {
			t.Errorf("the terminal's environment lacks %s: %q", kv, req.Env)
		}
	}

	seven := 7
	ed.run = func(context.Context, tool.TerminalRequest) (tool.TerminalResult, error) {
		return tool.TerminalResult{Output: "bad", ExitCode: &seven}, nil
	}
	got = bashSummary(bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "false"}))
	if !got.IsError || got.Text != "Exit code 7\nbad" {
		t.Errorf("failing command = %+v", got)
	}

	ed.run = func(context.Context, tool.TerminalRequest) (tool.TerminalResult, error) {
		return tool.TerminalResult{Output: "x", Signal: "SIGSEGV"}, nil
	}
	got = bashSummary(bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "crash"}))
	if !got.IsError || !strings.HasPrefix(got.Text, "Exit code 139") {
		t.Errorf("signalled command = %+v", got)
	}

	// The timeout ends the terminal's context; what it printed is kept.
	ed.run = func(ctx context.Context, _ tool.TerminalRequest) (tool.TerminalResult, error) {
		<-ctx.Done()
		return tool.TerminalResult{Output: "partial"}, nil
	}
	got = bashSummary(bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "sleep 9", "timeout": 50}))
	want = bashGot{Text: "partial\nCommand timed out after 50ms and was stopped", IsError: true,
		Structured: BashResult{Stdout: "partial", Interrupted: true, TimedOutAfterMs: 50}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("timeout (-want +got):\n%s", d)
	}

	// Cancelling the call ends the terminal's context too.
	ctx, cancel := context.WithCancel(context.Background())
	ed.run = func(tctx context.Context, _ tool.TerminalRequest) (tool.TerminalResult, error) {
		cancel()
		<-tctx.Done()
		return tool.TerminalResult{Output: "partial"}, nil
	}
	got = bashSummary(bashCall(t, ctx, Bash(), env, map[string]any{"command": "sleep 9"}))
	want = bashGot{Text: "partial\nCommand was aborted before completion", IsError: true,
		Structured: BashResult{Stdout: "partial", Interrupted: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cancel (-want +got):\n%s", d)
	}

	ed.run = func(context.Context, tool.TerminalRequest) (tool.TerminalResult, error) {
		return tool.TerminalResult{}, errors.New("no terminal today")
	}
	got = bashSummary(bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "true"}))
	if !got.IsError || got.Text != "Cannot run the command: no terminal today" {
		t.Errorf("terminal failure = %+v", got)
	}
}

// TestHostTerminalNotForSandboxOrBackground checks that a command the
// sandbox confines, and a background command, run as local processes,
// never in the host's terminal.
func TestHostTerminalNotForSandboxOrBackground(t *testing.T) {
	env := bashTestEnv(t)
	ed := newFakeEditor()
	env.Host = ed.host()
	sandbox.SetDecider(env.State, func(_ context.Context, req sandbox.Request) (*sandbox.Policy, error) {
		if req.Command == "sandboxed" {
			return &sandbox.Policy{}, nil
		}
		return nil, nil
	})
	bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "sandboxed"})
	r := bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "sleep 0", "run_in_background": true})
	if r.IsError {
		t.Fatalf("background: %s", r.Text())
	}
	if len(ed.runs) != 0 {
		t.Errorf("the terminal ran %+v", ed.runs)
	}
	bashCall(t, context.Background(), Bash(), env, map[string]any{"command": "unconfined"})
	if len(ed.runs) != 1 {
		t.Errorf("an unconfined command did not run in the terminal: %+v", ed.runs)
	}
}
