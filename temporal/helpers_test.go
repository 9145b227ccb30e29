package temporal

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/hooks"
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

// startWorker starts one session worker on testQueue with base options
// opts, quick to let sessions go to another worker when stopped; the
// caller stops it.
func startWorker(t testing.TB, c client.Client, opts *agentloop.Options) *Worker {
	t.Helper()
	w, err := NewWorker(c, testQueue, opts, &worker.Options{StickyScheduleToStartTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	return w
}

// hookLog records, in order and safely across goroutines, what the
// tests' hook callbacks saw.
type hookLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *hookLog) record(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
}

func (l *hookLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, ", ")
}

// hookCB is a matcher list of one callback returning f's output.
func hookCB(f func(hooks.Input) hooks.Output) []hooks.Matcher {
	return []hooks.Matcher{{Hooks: []hooks.Callback{func(_ context.Context, in hooks.Input, _ string) (hooks.Output, error) {
		return f(in), nil
	}}}}
}
