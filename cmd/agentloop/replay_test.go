package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestReplayAfterInterruptedResult: a user message sent while a turn runs
// is echoed when its own turn starts, after the interrupted turn's
// result, so that a host matching echoes to results (Zed's ACP adapter)
// does not take that result for the new message's.
func TestReplayAfterInterruptedResult(t *testing.T) {
	held, arrived := stalled()
	srv := agentlooptest.NewTB(t, held, agentlooptest.Text("second answer"))
	c := startConvo(t, srv, "--replay-user-messages")
	c.send(initLine("init1", ""))
	c.until(`"request_id":"init1"`)
	c.send(userLine("first"))
	awaitArrival(t, arrived)
	c.send(userLine("second"))
	c.send(`{"request_id":"i1","type":"control_request","request":{"subtype":"interrupt"}}`)
	c.until(`"result":"second answer"`)
	c.finish()
	at := func(subs ...string) int {
		return slices.IndexFunc(c.seen, func(l string) bool { return containsAll(l, subs) })
	}
	interrupted := at(`"subtype":"error_during_execution"`)
	echo := at(`"isReplay":true`, `"text":"second"`)
	if interrupted < 0 || echo < 0 || echo < interrupted {
		t.Errorf("the echo of the second message (line %d) comes before the interrupted result (line %d):\n%s",
			echo, interrupted, strings.Join(c.seen, "\n"))
	}
	if first := at(`"isReplay":true`, `"text":"first"`); first < 0 || first > interrupted {
		t.Errorf("the first message's echo is at line %d", first)
	}
}

// TestReplaysTaken: echoes come out in the order read, once, when their
// message has left the queue; dropped ones never; a refused message has
// none.
func TestReplaysTaken(t *testing.T) {
	var r replays
	add := func(id string) {
		t.Helper()
		if _, err := r.sendAndAdd(func() (string, error) { return id, nil }, func(id string) any { return strings.ToUpper(id) }); err != nil {
			t.Fatal(err)
		}
	}
	add("a")
	add("b")
	add("c")
	if _, err := r.sendAndAdd(func() (string, error) { return "", errors.New("refused") }, func(string) any { return "X" }); err == nil {
		t.Fatal("the refusal was lost")
	}
	queued := func(ids ...string) func() []string { return func() []string { return ids } }
	if got := r.taken(queued("a", "b", "c")); len(got) != 0 {
		t.Errorf("taken with all queued = %v", got)
	}
	r.withdraw(func() []string {
		if r.mu.TryLock() {
			r.mu.Unlock()
			t.Error("withdraw's remove runs outside the lock taken holds: a turn ending meanwhile would echo what was withdrawn")
		}
		return []string{"b"}
	})
	if got := r.taken(queued("c")); !slices.Equal(got, []any{"A"}) {
		t.Errorf("taken = %v, want [A]", got)
	}
	if got := r.taken(queued()); !slices.Equal(got, []any{"C"}) {
		t.Errorf("taken = %v, want [C]", got)
	}
}

// TestReplaySIGINTQueued: SIGINT ends the running turn and drops the
// queued messages; they never ran, so they are never echoed.
func TestReplaySIGINTQueued(t *testing.T) {
	reply, arrived := stalled()
	srv := agentlooptest.NewTB(t, reply, agentlooptest.Text("must not run"))
	ctx, hooks := withSignalHooks(context.Background())
	s := startSJContext(t, ctx, srv, "--replay-user-messages")
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	s.send(userLine("first"))
	awaitArrival(t, arrived)
	s.send(userLine("queued"))
	// Lines are handled in order: once this is answered, "queued" is queued.
	s.send(`{"request_id":"u1","type":"control_request","request":{"subtype":"get_frobnicator"}}`)
	s.until(`"request_id":"u1"`)
	if !hooks.sigint() {
		t.Fatal("no interrupt hook registered")
	}
	s.finish()
	for _, l := range s.seen {
		if containsAll(l, []string{`"isReplay":true`, `"text":"queued"`}) {
			t.Errorf("the dropped message was echoed: %s", l)
		}
	}
	if n := srv.Len(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
