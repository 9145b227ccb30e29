package subagent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/message"
)

// blocking runs until its context ends, then reports a stopped run.
func blocking(ctx context.Context, _ *Task) Outcome {
	<-ctx.Done()
	return Outcome{Err: ctx.Err()}
}

func answering(text string) func(context.Context, *Task) Outcome {
	return func(context.Context, *Task) Outcome {
		r := &message.Result{Subtype: message.ResultSuccess, Result: &text}
		return Outcome{Result: r}
	}
}

func TestRegistryCompletes(t *testing.T) {
	r := NewRegistry(t.TempDir())
	notified := make(chan string, 1)
	task, err := r.Start(Launch{Task: Task{ID: "a1", Type: "worker"}, Run: answering("all done"),
		Notify: func(o Outcome, _ Task) { notified <- o.Status() }})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait(context.Background(), "")
	if got := <-notified; got != StatusCompleted {
		t.Errorf("status %q", got)
	}
	notes := r.Take("")
	if len(notes) != 1 || !strings.Contains(notes[0], "all done") || !strings.Contains(notes[0], "has ended: completed") {
		t.Errorf("notices %q", notes)
	}
	if b, _ := os.ReadFile(task.OutputFile); !strings.Contains(string(b), "all done") {
		t.Errorf("output file %q", b)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(task.OutputFile); !os.IsNotExist(err) {
		t.Errorf("Close left the output file: %v", err)
	}
}

func TestRegistryStop(t *testing.T) {
	r := NewRegistry(t.TempDir())
	if _, found, _ := r.StopTask("nope"); found {
		t.Error("StopTask found an unknown task")
	}
	if _, err := r.Start(Launch{Task: Task{ID: "a1"}, Owner: "parent", Run: blocking}); err != nil {
		t.Fatal(err)
	}
	if n := r.Running("parent"); n != 1 {
		t.Fatalf("Running = %d", n)
	}
	res, found, err := r.StopTask("a1")
	if !found || err != nil || res.TaskType != "local_agent" {
		t.Fatalf("StopTask = %+v, %v, %v", res, found, err)
	}
	if notes := r.Take("parent"); len(notes) != 1 || !strings.Contains(notes[0], "has ended: stopped") {
		t.Errorf("notices %q", notes)
	}
	if err := r.Stop("a1"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("second Stop: %v", err)
	}
}

// TestRegistryRunEnd: the end of the main loop's run stops what it started.
func TestRegistryRunEnd(t *testing.T) {
	r := NewRegistry(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	r.SetRun(ctx)
	if _, err := r.Start(Launch{Task: Task{ID: "a1"}, Run: blocking}); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for r.Running("") > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if r.Running("") != 0 {
		t.Fatal("the end of the run did not stop the task")
	}
}

// TestHooksCancelledStopKeepsNotice: a run cancelled while it waits for
// its subagents at the stop takes no notice (it would never reach the
// model); the notice goes with the next prompt instead.
func TestHooksCancelledStopKeepsNotice(t *testing.T) {
	r := NewRegistry(t.TempDir())
	if _, err := r.Start(Launch{Task: Task{ID: "a1", Type: "worker"}, Run: answering("all done")}); err != nil {
		t.Fatal(err)
	}
	r.Wait(context.Background(), "")
	hp := r.Hooks("", engine.HookPoints{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := hp.BeforeStop(ctx, false); v.Continue {
		t.Errorf("the cancelled run continued with %q", v.Text)
	}
	v := hp.PromptSubmit(context.Background(), "next")
	if len(v.Context) != 1 || !strings.Contains(v.Context[0], "has ended: completed") {
		t.Errorf("the next prompt's context = %q, want the notice", v.Context)
	}
	if v := hp.BeforeStop(context.Background(), false); v.Continue {
		t.Errorf("the notice was given twice: %q", v.Text)
	}
}
