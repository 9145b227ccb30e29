package conversation_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
)

// TestSessionStartAfterCompaction: every compaction, automatic or manual,
// runs SessionStart with source compact after PostCompact, and what it
// adds reaches the model in the very next request: in the same run after
// an automatic compaction, with the next prompt after /compact.
func TestSessionStartAfterCompaction(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 40)
	opts := compactOptions(t, srv, cwd, configDir, 20_000)
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	opts.Hooks = map[hooks.Event][]hooks.Matcher{
		hooks.PostCompact: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			note("post:" + in.(hooks.PostCompactInput).Trigger)
			return hooks.Output{}, nil
		}}}},
		hooks.SessionStart: {{Matcher: "compact", Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			note("start:" + in.(hooks.SessionStartInput).Source)
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{AdditionalContext: "CTX-AFTER-COMPACT"}}, nil
		}}}},
	}
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Query(ctx, "Work through the outputs.").Result(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	autos := 0
	for i, r := range reqs {
		if !isSummary(r) {
			continue
		}
		autos++
		if i+1 >= len(reqs) || isSummary(reqs[i+1]) {
			t.Fatalf("summary request %d is not followed by a conversation request", i)
		}
		if !strings.Contains(allUserText(reqs[i+1]), "CTX-AFTER-COMPACT") {
			t.Errorf("the request after automatic compaction %d lacks the SessionStart context", autos)
		}
	}
	if autos == 0 {
		t.Fatal("no automatic compaction")
	}
	if _, err := c.Query(ctx, "/compact").Result(); err != nil {
		t.Fatal(err)
	}
	srv.SetRouter(nil)
	srv.Push(agentlooptest.Text("Fine."))
	if _, err := c.Query(ctx, "Go on.").Result(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(allUserText(srv.LastRequest()), "CTX-AFTER-COMPACT") {
		t.Error("the request after /compact lacks the SessionStart context")
	}
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for range autos {
		want = append(want, "post:auto", "start:compact")
	}
	want = append(want, "post:manual", "start:compact")
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("hooks ran\n %v\nwant\n %v", order, want)
	}
}
