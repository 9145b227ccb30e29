package temporal

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/encoding/protojson"
)

// update rewrites testdata/smoke_history.json from a live run:
//
//	GOTOOLCHAIN=go1.27.3 go test -run TestSmokeServer -update
var update = flag.Bool("update", false, "rewrite testdata/ from a live server run")

// smokeHistory is the exported history of one SmokeWorkflow run.
var smokeHistory = filepath.Join("testdata", "smoke_history.json")

// newTestServer starts an in-process Temporal server that the test stops
// on cleanup, and logs how long it took to start.
func newTestServer(t testing.TB) *temporaltest.TestServer {
	t.Helper()
	start := time.Now()
	var ts *temporaltest.TestServer
	if tt, ok := t.(*testing.T); ok {
		ts = temporaltest.NewServer(temporaltest.WithT(tt))
	} else {
		// A benchmark: no per-test logging, and stop it by hand.
		quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
		ts = temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
		t.Cleanup(ts.Stop)
	}
	t.Logf("temporaltest server up at %s in %v", ts.GetFrontendHostPort(), time.Since(start))
	return ts
}

// TestSmokeServer runs SmokeWorkflow on a real in-process server: one
// activity, one Update, one result. With -update it rewrites smokeHistory.
func TestSmokeServer(t *testing.T) {
	ts := newTestServer(t)
	ts.NewWorker(smokeTaskQueue, func(r worker.Registry) {
		r.RegisterWorkflow(SmokeWorkflow)
		r.RegisterActivity(Greet)
	})
	c := ts.GetDefaultClient()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "smoke-" + t.Name(),
		TaskQueue: smokeTaskQueue,
	}, SmokeWorkflow, "world")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}

	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   run.GetID(),
		RunID:        run.GetRunID(),
		UpdateName:   approveUpdate,
		Args:         []any{"yes"},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		t.Fatalf("UpdateWorkflow: %v", err)
	}
	var ack string
	if err := handle.Get(ctx, &ack); err != nil {
		t.Fatalf("update result: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if diff := cmp.Diff([]string{"ok:yes", "hello world; yes"}, []string{ack, got}); diff != "" {
		t.Errorf("update ack, workflow result (-want +got):\n%s", diff)
	}

	if *update {
		writeHistory(ctx, t, c, run.GetID(), run.GetRunID(), smokeHistory)
	}
}

// writeHistory exports a closed workflow's full history as protojson, the
// format worker.WorkflowReplayer reads.
func writeHistory(ctx context.Context, t *testing.T, c client.Client, id, runID, path string) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history: %v", err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(&h)
	if err != nil {
		t.Fatalf("marshal history: %v", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d events)", path, len(h.Events))
}

// TestSmokeReplay replays the recorded history against SmokeWorkflow, and
// against deliberately changed copies of it to prove that the replayer
// catches non-determinism.
func TestSmokeReplay(t *testing.T) {
	// timerFirst sleeps before the activity: a new command in front of the
	// recorded ones.
	timerFirst := func(ctx workflow.Context, name string) (string, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return "", err
		}
		return SmokeWorkflow(ctx, name)
	}
	// noActivity returns without scheduling the recorded activity.
	noActivity := func(ctx workflow.Context, name string) (string, error) {
		return "hello " + name, nil
	}
	tests := []struct {
		name    string
		wf      any
		wantErr bool
	}{
		{"unchanged", SmokeWorkflow, false},
		{"timer before activity", timerFirst, true},
		{"activity dropped", noActivity, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(tt.wf, workflow.RegisterOptions{Name: "SmokeWorkflow"})
			// A nil logger would print every replayed command at DEBUG.
			quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
			err := r.ReplayWorkflowHistoryFromJSONFile(quiet, smokeHistory)
			if (err != nil) != tt.wantErr {
				t.Fatalf("replay error = %v, want error: %v", err, tt.wantErr)
			}
			if err != nil {
				t.Logf("replay failed as expected: %v", err)
			}
		})
	}
}
