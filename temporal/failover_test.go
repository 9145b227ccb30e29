package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Environment of a helper worker process started by TestWorkerFailover.
const (
	envHelper    = "AGENTLOOP_TEMPORAL_HELPER"    // "1" in a helper process
	envHostPort  = "AGENTLOOP_TEMPORAL_HOSTPORT"  // the server's frontend
	envNamespace = "AGENTLOOP_TEMPORAL_NAMESPACE" // the test namespace
	envDir       = "AGENTLOOP_TEMPORAL_DIR"       // where PID and ready files go
)

// failoverTaskQueue is the task queue both helper workers poll.
const failoverTaskQueue = "agentloop-failover"

// SlowActivity heartbeats for d and returns the PID of the process that ran
// it to the end. On start it writes that PID to attempt-N.pid in $envDir so
// the test knows which worker to kill.
func SlowActivity(ctx context.Context, d time.Duration) (int, error) {
	pid := os.Getpid()
	name := fmt.Sprintf("attempt-%d.pid", activity.GetInfo(ctx).Attempt)
	if err := writeFileAtomic(filepath.Join(os.Getenv(envDir), name), strconv.Itoa(pid)); err != nil {
		return 0, err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
			activity.RecordHeartbeat(ctx)
		}
	}
	return pid, nil
}

// FailoverWorkflow runs SlowActivity with a short heartbeat timeout, so a
// killed worker's attempt is retried on another worker within about a second.
func FailoverWorkflow(ctx workflow.Context, d time.Duration) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		HeartbeatTimeout:    time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    100 * time.Millisecond,
			BackoffCoefficient: 1,
			MaximumAttempts:    3,
		},
	})
	var pid int
	err := workflow.ExecuteActivity(ctx, SlowActivity, d).Get(ctx, &pid)
	return pid, err
}

// TestHelperWorker is not a test: TestWorkerFailover re-executes the test
// binary with -test.run=^TestHelperWorker$ and $envHelper=1 to get a worker
// process. It polls until SIGTERM (or until it is killed).
func TestHelperWorker(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("helper process for TestWorkerFailover")
	}
	c, err := client.Dial(client.Options{
		HostPort:  os.Getenv(envHostPort),
		Namespace: os.Getenv(envNamespace),
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	w := worker.New(c, failoverTaskQueue, worker.Options{
		// The killed worker may hold the workflow's sticky queue; fall back
		// to the normal queue quickly instead of after the default 5 s.
		StickyScheduleToStartTimeout: time.Second,
	})
	w.RegisterWorkflow(FailoverWorkflow)
	w.RegisterActivity(SlowActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	defer w.Stop()
	ready := filepath.Join(os.Getenv(envDir), fmt.Sprintf("ready-%d", os.Getpid()))
	if err := writeFileAtomic(ready, ""); err != nil {
		t.Fatal(err)
	}
	<-worker.InterruptCh()
}

// TestWorkerFailover starts an in-process server and two worker processes,
// SIGKILLs the one running the activity, and checks that the workflow
// completes on the other.
func TestWorkerFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes; skipped with -short")
	}
	ts := newTestServer(t)
	dir := t.TempDir()

	start := time.Now()
	helpers := map[int]*exec.Cmd{}
	for i := range 2 {
		cmd := startHelper(t, ts, dir, i)
		helpers[cmd.Process.Pid] = cmd
	}
	waitFor(t, 30*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		return len(m) == 2
	})
	t.Logf("2 workers ready in %v", time.Since(start))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start = time.Now()
	run, err := ts.GetDefaultClient().ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "failover",
		TaskQueue: failoverTaskQueue,
	}, FailoverWorkflow, 3*time.Second)
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}

	var victim int
	waitFor(t, 30*time.Second, func() bool {
		victim, err = readPID(filepath.Join(dir, "attempt-1.pid"))
		return err == nil
	})
	cmd, ok := helpers[victim]
	if !ok {
		t.Fatalf("attempt 1 ran in pid %d, not a helper", victim)
	}
	time.Sleep(500 * time.Millisecond) // let it heartbeat at least once
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill %d: %v", victim, err)
	}
	_ = cmd.Wait()
	delete(helpers, victim)
	t.Logf("attempt 1 started in %v; SIGKILLed worker %d", killed.Sub(start), victim)

	var winner int
	if err := run.Get(ctx, &winner); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	t.Logf("workflow completed %v after the kill (activity runs 3 s), %v in all",
		time.Since(killed), time.Since(start))
	if _, ok := helpers[winner]; !ok {
		t.Errorf("activity completed in pid %d, want the surviving worker", winner)
	}
	logTimeline(ctx, t, ts.GetDefaultClient(), run.GetID(), run.GetRunID(), killed)
}

// logTimeline logs each history event's time relative to the kill, to see
// where fail-over time goes.
func logTimeline(ctx context.Context, t *testing.T, c client.Client, id, runID string, killed time.Time) {
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Logf("history: %v", err)
			return
		}
		t.Logf("%+7.3fs %v", ev.GetEventTime().AsTime().Sub(killed).Seconds(), ev.GetEventType())
	}
}

// startHelper starts worker process i and stops it with SIGTERM on cleanup;
// its output goes to worker-i.log in dir, shown if the test fails.
func startHelper(t *testing.T, ts interface {
	GetFrontendHostPort() string
	GetDefaultNamespace() string
}, dir string, i int, extraEnv ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(dir, fmt.Sprintf("worker-%d.log", i))
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	run := "^TestHelperWorker$"
	if len(extraEnv) > 0 && strings.HasPrefix(extraEnv[0], "-test.run=") {
		run, extraEnv = strings.TrimPrefix(extraEnv[0], "-test.run="), extraEnv[1:]
	}
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v")
	cmd.Env = append(append(os.Environ(), extraEnv...),
		envHelper+"=1",
		envHostPort+"="+ts.GetFrontendHostPort(),
		envNamespace+"="+ts.GetDefaultNamespace(),
		envDir+"="+dir,
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // not killed by the test
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("worker %d output:\n%s", i, b)
		}
	})
	return cmd
}

// waitFor polls cond every 50 ms until it holds or d has passed.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
	}
}

// writeFileAtomic writes s to path through a rename, so a reader never sees
// a partial file.
func writeFileAtomic(path, s string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readPID reads a PID written by writeFileAtomic.
func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, errors.New("bad pid file " + path)
	}
	return pid, nil
}
