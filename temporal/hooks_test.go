package temporal

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
)

// TestDurableHooks: the worker's hooks run on the durable path as they do
// in-process: UserPromptSubmit's context reaches the model, PostToolUse
// sees the call's output and adds context, and a Stop hook that blocks
// once keeps the run going with its reason.
func TestDurableHooks(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_g", "Glob", map[string]any{"pattern": "*"}),
		agentlooptest.Text("finished"),
		agentlooptest.Text("tests pass"))
	var log hookLog
	record, cb := log.record, hookCB
	var stops atomic.Int32
	opts := workerOptions(t, srv)
	opts.Hooks = map[hooks.Event][]hooks.Matcher{
		hooks.UserPromptSubmit: cb(func(in hooks.Input) hooks.Output {
			record("prompt " + in.(hooks.UserPromptSubmitInput).Prompt)
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.UserPromptSubmit,
				AdditionalContext: "today is Tuesday"}}
		}),
		hooks.PostToolUse: cb(func(in hooks.Input) hooks.Output {
			record("post " + in.(hooks.PostToolUseInput).ToolName)
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.PostToolUse,
				AdditionalContext: "the listing was checked"}}
		}),
		hooks.Stop: cb(func(in hooks.Input) hooks.Output {
			record("stop")
			if stops.Add(1) == 1 {
				return hooks.Output{Decision: "block", Reason: "run the tests first"}
			}
			return hooks.Output{}
		}),
	}
	c := startWorkers(t, opts, 1)
	res, err := Query(context.Background(), c, testQueue, "go", &agentloop.Options{Cwd: t.TempDir(), Tools: []string{"Glob"},
		AllowedTools: []string{"Glob"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Result == nil || *res.Result != "tests pass" {
		t.Errorf("result %v, want the reply after the Stop hook's block", res.Result)
	}
	if got := log.String(); got != "prompt go, post Glob, stop, stop" {
		t.Errorf("hooks ran: %s", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []string{"today is Tuesday", "the listing was checked", "run the tests first"} {
		if !strings.Contains(string(reqs[i].Body), want) {
			t.Errorf("request %d lacks %q", i+1, want)
		}
	}
}

// TestDurableSessionHooks: SessionStart runs once for the session, with
// its context in the first request, even when another worker takes the
// session over (the first worker stops: that is not the session's end, so
// no SessionEnd); PreCompact, PostCompact and SessionStart (source
// compact) run around a /compact on the worker; SessionEnd runs once,
// when the session closes.
func TestDurableSessionHooks(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("one"),
		agentlooptest.Text("the summary"),
		agentlooptest.Text("three"))
	var log hookLog
	record, cb := log.record, hookCB
	opts := workerOptions(t, srv)
	opts.Hooks = map[hooks.Event][]hooks.Matcher{
		hooks.SessionStart: cb(func(in hooks.Input) hooks.Output {
			record("start " + in.(hooks.SessionStartInput).Source)
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.SessionStart,
				AdditionalContext: "the repo is tidy"}}
		}),
		hooks.PreCompact: cb(func(in hooks.Input) hooks.Output {
			record("precompact " + in.(hooks.PreCompactInput).Trigger)
			return hooks.Output{}
		}),
		hooks.PostCompact: cb(func(in hooks.Input) hooks.Output {
			record("postcompact " + in.(hooks.PostCompactInput).CompactSummary)
			return hooks.Output{}
		}),
		hooks.SessionEnd: cb(func(in hooks.Input) hooks.Output {
			record("end")
			return hooks.Output{}
		}),
	}
	ts := newTestServer(t)
	c := ts.GetDefaultClient()
	ctx := context.Background()
	w1 := startWorker(t, c, opts)
	s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: t.TempDir(), Tools: []string{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(ctx, "first").Result(); err != nil {
		t.Fatal(err)
	}
	w1.Stop()
	w2 := startWorker(t, c, opts)
	defer w2.Stop()
	for _, p := range []string{"/compact", "third"} {
		if _, err := s.Query(ctx, p).Result(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := log.String()
	if want := "start startup, precompact manual, postcompact the summary, start compact, end"; got != want {
		t.Errorf("hooks ran: %s\nwant:      %s", got, want)
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[0].Body), "the repo is tidy") {
		t.Errorf("%d requests; the first should carry SessionStart's context", len(reqs))
	}
}
