package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// envAPI is the scripted API's URL in a session worker process.
const envAPI = "AGENTLOOP_TEMPORAL_API"

// TestHelperSessionWorker is not a test: TestSessionFailover runs the test
// binary as session worker processes through it. Each uses its own API key,
// sk-test-<pid>, so the scripted API can tell which one asked.
func TestHelperSessionWorker(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("helper process for TestSessionFailover")
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envHostPort), Namespace: os.Getenv(envNamespace)})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	p, err := anthropic.New(&anthropic.Options{APIKey: fmt.Sprintf("sk-test-%d", os.Getpid()), BaseURL: os.Getenv(envAPI)})
	if err != nil {
		t.Fatal(err)
	}
	opts := &agentloop.Options{Provider: p, SettingSources: []settings.SettingSource{}, DisableAutoCompact: true}
	w, err := NewWorker(c, testQueue, opts, &worker.Options{StickyScheduleToStartTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	defer w.Stop()
	if err := writeFileAtomic(filepath.Join(os.Getenv(envDir), fmt.Sprintf("ready-%d", os.Getpid())), ""); err != nil {
		t.Fatal(err)
	}
	<-worker.InterruptCh()
}

// TestSessionFailover kills -9 the worker process that runs a session's
// activity, on a real Temporal server with two worker processes, and checks
// that the session completes on the other one with nothing lost and
// nothing done twice:
//   - model: killed in the middle of a streamed reply, the request is made
//     again by the other worker and the stream shows one reply;
//   - bash: killed in the middle of a state-changing Bash call, the call is
//     not run again (its side effect happened once) and the model gets an
//     is_error result saying the worker failed.
func TestSessionFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes; skipped with -short")
	}
	tests := []struct {
		name     string
		replies  []agentlooptest.Reply
		activity string // the activity whose worker is killed
		ready    func(cwd string) bool
		check    func(t *testing.T, cwd string, msgs []agentloop.Message, srv *agentlooptest.Server)
	}{
		{
			name: "model",
			replies: []agentlooptest.Reply{
				slowText("first attempt, cut short by the kill. ", 40),
				agentlooptest.Text("second attempt"),
			},
			activity: actCallModel,
			check: func(t *testing.T, cwd string, msgs []agentloop.Message, srv *agentlooptest.Server) {
				var texts []string
				for _, m := range msgs {
					if a, ok := m.(*agentloop.AssistantMessage); ok {
						texts = append(texts, a.Message.Content[0].Text)
					}
				}
				if len(texts) != 1 || texts[0] != "second attempt" {
					t.Errorf("assistant texts %q, want only the second attempt's", texts)
				}
				if n := len(srv.Requests()); n != 2 {
					t.Errorf("%d model requests, want 2 (the cut one, then one on the other worker)", n)
				}
			},
		},
		{
			name: "bash",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_bash", "Bash", map[string]any{"command": "echo start >> f; sleep 4; echo done >> f"}),
				agentlooptest.Text("ok"),
			},
			activity: actRunTool,
			ready: func(cwd string) bool {
				b, _ := os.ReadFile(filepath.Join(cwd, "f"))
				return strings.Contains(string(b), "start")
			},
			check: func(t *testing.T, cwd string, msgs []agentloop.Message, srv *agentlooptest.Server) {
				time.Sleep(5 * time.Second) // what the cut call left running has ended
				b, _ := os.ReadFile(filepath.Join(cwd, "f"))
				if n := strings.Count(string(b), "start"); n != 1 {
					t.Errorf("the Bash call started %d times (f = %q), want once", n, b)
				}
				var got string
				for _, m := range msgs {
					if u, ok := m.(*agentloop.UserMessage); ok {
						for _, c := range u.Message.Content {
							if c.ToolUseID == "toolu_bash" && c.IsError != nil && *c.IsError {
								got = c.ResultText()
							}
						}
					}
				}
				if got != InterruptedByWorker {
					t.Errorf("the Bash call's result = %q, want the is_error %q", got, InterruptedByWorker)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			srv := agentlooptest.NewTB(t, tc.replies...)
			dir, cwd := t.TempDir(), t.TempDir()
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
			type outcome struct {
				msgs []agentloop.Message
				err  error
			}
			done := make(chan outcome, 1)
			opts := &agentloop.Options{SessionID: uuid.NewString(), Cwd: cwd, Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}}
			go func() {
				msgs, err := Query(ctx, c, testQueue, "Go.", opts).Collect()
				done <- outcome{msgs, err}
			}()
			victim := runningWorker(t, ctx, c, "agentloop-"+opts.SessionID, tc.activity, tc.ready, cwd)
			if !helpers[victim] {
				t.Fatalf("%s runs in pid %d, not a helper (%v)", tc.activity, victim, helpers)
			}
			time.Sleep(300 * time.Millisecond)
			if err := syscallKill(victim); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			out := <-done
			if out.err != nil {
				t.Fatalf("the session did not complete after the kill: %v", out.err)
			}
			t.Logf("completed %v after the kill", time.Since(killed))
			if r, ok := out.msgs[len(out.msgs)-1].(*agentloop.ResultMessage); !ok || r.Subtype != "success" {
				t.Fatalf("last message %+v", out.msgs[len(out.msgs)-1])
			}
			tc.check(t, cwd, out.msgs, srv)
		})
	}
}

// runningWorker waits until the workflow id has a started activity of type
// act (and ready, when set, holds for cwd) and returns the PID of the
// worker running it, from its identity ("pid@host@…").
func runningWorker(t *testing.T, ctx context.Context, c client.Client, id, act string, ready func(string) bool, cwd string) int {
	t.Helper()
	var pid int
	waitFor(t, 60*time.Second, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false
		}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetActivityType().GetName() != act || pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			n, err := strconv.Atoi(strings.SplitN(pa.GetLastWorkerIdentity(), "@", 2)[0])
			if err != nil || (ready != nil && !ready(cwd)) {
				return false
			}
			pid = n
			return true
		}
		return false
	})
	return pid
}

// slowText is a text reply of n parts streamed over about n × 100 ms.
func slowText(part string, n int) agentlooptest.Reply {
	r := agentlooptest.Text(strings.Repeat(part, n))
	r.Chunk = len(part)
	r.EventDelay = 100 * time.Millisecond
	return r
}
