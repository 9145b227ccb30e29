package temporal

import (
	"os"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// testQueue is the task queue of the tests' session workers.
const testQueue = "agentloop-sessions"

// sortStrings compares string slices as sets (concurrent tool results
// arrive in completion order).
var sortStrings = cmp.Options{cmpopts.SortSlices(func(a, b string) bool { return a < b })}

// startWorkers starts an in-process Temporal server and n session workers
// on testQueue with base options opts, all stopped when the test ends, and
// returns a client of the server.
func startWorkers(t testing.TB, opts *agentloop.Options, n int) client.Client {
	t.Helper()
	ts := newTestServer(t)
	c := ts.GetDefaultClient()
	for range n {
		w, err := NewWorker(c, testQueue, opts, &worker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	return c
}

// syscallKill sends SIGKILL to pid.
func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
