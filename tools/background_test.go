//go:build unix

package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/tool"
)

// bgOutput is what Shells.Output returns.
type bgOutput struct {
	Stdout, Stderr string
	Running        bool
	ExitCode       int
}

// bgWaitOutput polls the shell's output until ok accepts it.
func bgWaitOutput(t *testing.T, shells *Shells, id string, ok func(bgOutput) bool) bgOutput {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var o bgOutput
		var err error
		o.Stdout, o.Stderr, o.Running, o.ExitCode, err = shells.Output(id)
		if err != nil {
			t.Fatalf("Output(%s): %v", id, err)
		}
		if ok(o) {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("Output(%s) = %+v, still not as expected", id, o)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bgStartText(shells *Shells, id string) string {
	out := filepath.Join(shells.Dir(), id+".stdout")
	errf := filepath.Join(shells.Dir(), id+".stderr")
	return fmt.Sprintf("Command running in background with ID: %s. Its stdout is being written to %s and its stderr to %s. "+
		"You will be notified when it completes. To check interim output, read those files; call TaskStop with task_id %q to stop it.", id, out, errf, id)
}

// TestBackgroundNotices: a background shell that ends leaves one notice,
// in the reference's <task-notification> form (testdata/conformance/
// t_bash_background of the module), naming the call that started it, its
// output files, its status and its description; TakeNotices hands each
// out once.
func TestBackgroundNotices(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	for _, tc := range []struct {
		command, status, summary string
	}{
		{"echo done", "completed", `Background command "Slow job" completed (exit code 0)`},
		{"exit 3", "failed", `Background command "Slow job" failed with exit code 3`},
	} {
		r := sideRun(t, t.Context(), Bash(), env, map[string]any{"command": tc.command, "description": "Slow job", "run_in_background": true})
		id := r.Structured.(BashResult).BackgroundTaskID
		sh, err := shells.lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		<-sh.done
		want := []string{fmt.Sprintf("<task-notification>\n<task-id>%s</task-id>\n<tool-use-id>toolu_test</tool-use-id>\n<output-file>%s</output-file>\n<error-file>%s</error-file>\n"+
			"<status>%s</status>\n<summary>%s</summary>\n</task-notification>", id, sh.info.StdoutPath, sh.info.StderrPath, tc.status, tc.summary)}
		if diff := cmp.Diff(want, shells.TakeNotices()); diff != "" {
			t.Errorf("%s: notices (-want +got):\n%s", tc.command, diff)
		}
		if got := shells.TakeNotices(); len(got) != 0 {
			t.Errorf("notices handed out twice: %q", got)
		}
	}
}

func TestBackgroundRunReadStop(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	pidfile := filepath.Join(env.Cwd, "pid")
	command := fmt.Sprintf(`sleep 300 & echo $! > %q; echo started; pwd; echo warn >&2; wait`, pidfile)

	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": command, "run_in_background": true})
	want := bashGot{Text: bgStartText(shells, "bash_1"), Structured: BashResult{BackgroundTaskID: "bash_1"}}
	if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
		t.Fatalf("start (-want +got):\n%s", diff)
	}

	got := bgWaitOutput(t, shells, "bash_1", func(o bgOutput) bool { return o.Stderr != "" })
	if diff := cmp.Diff(bgOutput{Stdout: "started\n" + env.Cwd, Stderr: "warn", Running: true, ExitCode: -1}, got); diff != "" {
		t.Errorf("output while running (-want +got):\n%s", diff)
	}
	// The files are there for the model to Read.
	if b, err := os.ReadFile(filepath.Join(shells.Dir(), "bash_1.stdout")); err != nil || string(b) != "started\n"+env.Cwd+"\n" {
		t.Errorf("stdout file = %q, %v", b, err)
	}

	r = bashCall(t, t.Context(), TaskStop(), env, map[string]any{"task_id": "bash_1"})
	msg := "Stopped background task bash_1 (" + command + ")"
	wantStop := bashGot{Text: msg, Structured: TaskStopResult{Message: msg, TaskID: "bash_1", TaskType: "local_bash", Command: command}}
	if diff := cmp.Diff(wantStop, bashSummary(r)); diff != "" {
		t.Errorf("TaskStop (-want +got):\n%s", diff)
	}
	bashWaitGone(t, bashReadPid(t, pidfile), 2*time.Second)

	o := bgWaitOutput(t, shells, "bash_1", func(bgOutput) bool { return true })
	if diff := cmp.Diff(bgOutput{Stdout: "started\n" + env.Cwd, Stderr: "warn", ExitCode: 143}, o); diff != "" {
		t.Errorf("output after stop (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"again", map[string]any{"task_id": "bash_1"}, "Background task bash_1 is not running: it was already stopped."},
		{"unknown", map[string]any{"task_id": "bash_99"}, "No background task found with ID: bash_99"},
		{"unknown shell_id", map[string]any{"shell_id": "nope"}, "No background task found with ID: nope"},
		{"neither", map[string]any{}, "Give the ID of the background task to stop in task_id."},
	} {
		r := bashCall(t, t.Context(), TaskStop(), env, tt.input)
		if diff := cmp.Diff(bashGot{Text: tt.want, IsError: true}, bashSummary(r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestBackgroundExitAndShellID(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{
		"command": "echo out; echo err >&2; exit 4", "run_in_background": true})
	if r.IsError {
		t.Fatalf("start: %s", r.Text())
	}
	o := bgWaitOutput(t, shells, "bash_1", func(o bgOutput) bool { return !o.Running })
	if diff := cmp.Diff(bgOutput{Stdout: "out", Stderr: "err", ExitCode: 4}, o); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	r = bashCall(t, t.Context(), TaskStop(), env, map[string]any{"shell_id": "bash_1"})
	want := bashGot{Text: "Background task bash_1 is not running: it already exited with code 4.", IsError: true}
	if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
		t.Errorf("TaskStop (-want +got):\n%s", diff)
	}

	// IDs go on counting; shell_id works like task_id.
	r = bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "exec sleep 300", "run_in_background": true})
	if diff := cmp.Diff(BashResult{BackgroundTaskID: "bash_2"}, r.Structured); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	r = bashCall(t, t.Context(), TaskStop(), env, map[string]any{"shell_id": "bash_2"})
	if r.IsError {
		t.Errorf("TaskStop by shell_id: %s", r.Text())
	}
}

func TestBackgroundLifetime(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	start := time.Now()
	bashCall(t, t.Context(), Bash(), env, map[string]any{
		"command": "echo up; exec sleep 300", "run_in_background": true, "timeout": 150})
	o := bgWaitOutput(t, shells, "bash_1", func(o bgOutput) bool { return !o.Running })
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("stopped after %v, before its lifetime", d)
	}
	if diff := cmp.Diff(bgOutput{Stdout: "up", ExitCode: 143}, o); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	info, err := shells.Info("bash_1")
	if err != nil || !info.Stopped || info.Running {
		t.Errorf("Info = %+v, %v", info, err)
	}
}

func TestBackgroundSessionsAreSeparate(t *testing.T) {
	a, b := bashTestEnv(t), bashTestEnv(t)
	bashCall(t, t.Context(), Bash(), a, map[string]any{"command": "exec sleep 300", "run_in_background": true})
	r := bashCall(t, t.Context(), TaskStop(), b, map[string]any{"task_id": "bash_1"})
	if !r.IsError {
		t.Errorf("session b stopped session a's shell: %s", r.Text())
	}
	if BackgroundShells(a) != BackgroundShells(a) || BackgroundShells(a) == BackgroundShells(b) {
		t.Error("BackgroundShells does not keep one registry per session")
	}
	if BackgroundShells(nil) != BackgroundShells(&tool.Env{}) {
		t.Error("calls without a state do not share the fallback registry")
	}
}

func TestBackgroundStopAllAndClose(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	for range 3 {
		bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "exec sleep 300", "run_in_background": true})
	}
	bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "true", "run_in_background": true})
	list := shells.List()
	if len(list) != 4 {
		t.Fatalf("List = %+v", list)
	}
	for i, info := range list {
		if want := fmt.Sprintf("bash_%d", i+1); info.ID != want || info.Dir != env.Cwd {
			t.Errorf("List[%d] = %+v, want ID %s", i, info, want)
		}
	}
	start := time.Now()
	shells.StopAll()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("StopAll took %v", d)
	}
	for _, info := range shells.List() {
		if info.Running {
			t.Errorf("%s still runs after StopAll", info.ID)
		}
	}
	if err := shells.Stop("bash_1"); !errors.Is(err, ErrShellNotRunning) {
		t.Errorf("Stop after StopAll = %v, want ErrShellNotRunning", err)
	}
	if err := shells.Stop("bash_9"); !errors.Is(err, ErrNoShell) {
		t.Errorf("Stop(unknown) = %v, want ErrNoShell", err)
	}
	if _, _, _, _, err := shells.Output("bash_9"); !errors.Is(err, ErrNoShell) {
		t.Errorf("Output(unknown) = %v, want ErrNoShell", err)
	}
	if err := shells.Close(); err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		if _, err := os.Stat(info.StdoutPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Close: %v", info.StdoutPath, err)
		}
	}
}

// TestShellsCloseRemovesTempDir: the session's temporary directory, with
// what a command left in it, is gone after Close, and so is the session's
// directory (nothing piles up in the system's temporary directory).
func TestShellsCloseRemovesTempDir(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	if !strings.HasPrefix(shells.TempDir(), shells.Dir()+string(filepath.Separator)) {
		t.Fatalf("TempDir %s is not inside Dir %s", shells.TempDir(), shells.Dir())
	}
	left := filepath.Join(shells.TempDir(), "build", "cache")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "obj"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := shells.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shells.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after Close: %v", shells.Dir(), err)
	}
}

func TestBackgroundIDSkipsFilesOfOtherProcesses(t *testing.T) {
	env := bashTestEnv(t)
	shells := BackgroundShells(env)
	if err := os.MkdirAll(shells.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(shells.Dir(), "bash_1.stdout")
	if err := os.WriteFile(taken, []byte("someone else's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(taken) })
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "true", "run_in_background": true})
	if diff := cmp.Diff(BashResult{BackgroundTaskID: "bash_2"}, r.Structured); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTaskStopInfo(t *testing.T) {
	tl := TaskStop()
	if err := tool.Check(tl); err != nil {
		t.Fatalf("Check: %v", err)
	}
	info := tl.Info()
	if info.Name != "TaskStop" || info.ReadOnly || info.Description == "" {
		t.Errorf("Info = %+v", info)
	}
	bashCompareSchema(t, info.InputSchema,
		`{"type":"object","properties":{"task_id":{"type":"string"},"shell_id":{"type":"string"}},"additionalProperties":false}`)
	bashCompareKeyOrder(t, info.InputSchema, []string{"task_id", "shell_id"})
}

// TestShellsCloseLeavesUnnamedDirs: a session that never asked for its
// directories (it started no command) leaves them to whoever made them, as
// another process resuming the same session does, and costs Close no
// system call; once asked for, Close removes them.
func TestShellsCloseLeavesUnnamedDirs(t *testing.T) {
	env := bashTestEnv(t)
	other := newShells(env.SessionID) // the same session in another process
	made := filepath.Join(other.TempDir(), "work")
	if err := os.MkdirAll(made, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other.Dir()) })
	idle := BackgroundShells(env)
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("Close of a session that made nothing removed another's directory: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after Close: %v", other.Dir(), err)
	}
}
