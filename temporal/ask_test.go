package temporal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// writeScript asks for one Write of "x.txt" in cwd, then answers.
func writeScript(cwd string) []agentlooptest.Reply {
	return []agentlooptest.Reply{
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": filepath.Join(cwd, "x.txt"), "content": "x\n"}),
		agentlooptest.Text("answered"),
	}
}

// resultText is the text of the tool result for id in msgs, and whether it
// is an error.
func resultText(msgs []agentloop.Message, id string) (string, bool) {
	for _, m := range msgs {
		if u, ok := m.(*agentloop.UserMessage); ok {
			for _, b := range u.Message.Content {
				if b.ToolUseID == id {
					return b.ResultText(), b.IsError != nil && *b.IsError
				}
			}
		}
	}
	return "", false
}

// TestDurableAsksClient: a call the rules leave undecided goes to the
// CanUseTool of the client that called Query, through the workflow; its
// answer decides the call.
func TestDurableAsksClient(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(map[bool]string{true: "allow", false: "deny"}[allow], func(t *testing.T) {
			cwd := t.TempDir()
			srv := agentlooptest.NewTB(t, writeScript(cwd)...)
			c := startWorkers(t, workerOptions(t, srv), 1)
			var asked []agentloop.PermissionRequest
			opts := &agentloop.Options{Cwd: cwd, Tools: []string{"Write"},
				CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					asked = append(asked, req)
					if allow {
						return agentloop.Allow(), nil
					}
					return agentloop.Deny("not today"), nil
				}}
			msgs, err := Query(context.Background(), c, testQueue, "Write it.", opts).Collect()
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || asked[0].ToolName != "Write" || asked[0].ToolUseID != "toolu_w" {
				t.Fatalf("CanUseTool asked %+v, want once for toolu_w", asked)
			}
			_, statErr := os.Stat(filepath.Join(cwd, "x.txt"))
			text, isErr := resultText(msgs, "toolu_w")
			if allow && (statErr != nil || isErr) {
				t.Errorf("allowed: file %v, result %q (error %v)", statErr, text, isErr)
			}
			if !allow && (statErr == nil || !isErr || !strings.Contains(text, "not today")) {
				t.Errorf("denied: file %v, result %q (error %v)", statErr, text, isErr)
			}
		})
	}
}

// TestPermissionWaitFailover kills -9 the worker holding a session while
// its permission request waits for the client: the request lives in the
// workflow, so the client's answer reaches the other worker, which runs
// the call once; the client was asked once and saw every message once.
func TestPermissionWaitFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes; skipped with -short")
	}
	ts := newTestServer(t)
	cwd, dir := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, writeScript(cwd)...)
	helpers := map[int]bool{}
	for i := range 2 {
		cmd := startHelper(t, ts, dir, i, "-test.run=^TestHelperSessionWorker$", envAPI+"="+srv.URL)
		helpers[cmd.Process.Pid] = true
		t.Cleanup(func() { _ = cmd.Process.Kill() })
	}
	waitFor(t, 60*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		return len(m) == 2
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := ts.GetDefaultClient()
	waiting, proceed := make(chan struct{}), make(chan struct{})
	var asks atomic.Int32
	id := uuid.NewString()
	opts := &agentloop.Options{SessionID: id, Cwd: cwd, Tools: []string{"Write"},
		CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			if asks.Add(1) == 1 {
				close(waiting)
			}
			<-proceed
			return agentloop.Allow(), nil
		}}
	type outcome struct {
		msgs []agentloop.Message
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		msgs, err := Query(ctx, c, testQueue, "Write it.", opts).Collect()
		done <- outcome{msgs, err}
	}()
	<-waiting
	victim := lastWorkflowWorker(t, ctx, c, "agentloop-"+id)
	if !helpers[victim] {
		t.Fatalf("the session is held by pid %d, not a helper (%v)", victim, helpers)
	}
	if err := syscallKill(victim); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	out := <-done
	if out.err != nil {
		t.Fatalf("the session did not complete after the kill: %v", out.err)
	}
	if n := asks.Load(); n != 1 {
		t.Errorf("the client was asked %d times, want once", n)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "x.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("x.txt = %q, %v", b, err)
	}
	var labels []string
	for _, m := range out.msgs {
		labels = append(labels, label(m))
	}
	want := []string{"system/init", "assistant:tool_use", "user", "assistant:text", "result/success"}
	if strings.Join(labels, " ") != strings.Join(want, " ") {
		t.Errorf("messages %v, want each once: %v", labels, want)
	}
}

// lastWorkflowWorker is the PID of the worker that completed the workflow
// id's last workflow task: the one holding it in its cache.
func lastWorkflowWorker(t *testing.T, ctx context.Context, c client.Client, id string) int {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	identity := ""
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			identity = a.GetIdentity()
		}
	}
	var pid int
	for _, r := range identity {
		if r < '0' || r > '9' {
			break
		}
		pid = pid*10 + int(r-'0')
	}
	return pid
}
