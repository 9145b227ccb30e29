package conversation_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// overflowRouter scripts a conversation whose second request the API
// refuses as too long while it still carries the first tool output
// (always, when stubborn): the estimate let it through, the API did not.
// After the compaction the model answers from the summary, or, when
// refetch, calls the tool again, whose output overflows again.
func overflowRouter(srv *agentlooptest.Server, stubborn, refetch bool) {
	var mu sync.Mutex
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		body := string(r.Body)
		switch {
		case isSummary(r):
			return agentlooptest.Text("SUMMARY 1: read output 1."), true
		case stubborn || strings.Contains(body, "output 1: "):
			if len(r.Params.Messages) == 1 && !stubborn {
				break
			}
			return agentlooptest.Error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"), true
		}
		if len(r.Params.Messages) == 1 && (refetch || !strings.Contains(body, "SUMMARY 1:")) {
			return agentlooptest.ToolUse("toolu_1", "big", map[string]any{"n": 1}), true
		}
		return agentlooptest.Text("All done."), true
	})
}

// TestContextOverflowRecovered: a request the API refuses as too long for
// the window is compacted and sent again, once; with compaction off, a
// PreCompact block, a second refusal, or a new refusal right after the
// compaction, the API's error ends the run (never a loop).
func TestContextOverflowRecovered(t *testing.T) {
	cases := []struct {
		name      string
		stubborn  bool
		refetch   bool
		fresh     bool // stubborn from the first request: the history is only the prompt
		disable   bool
		block     bool
		wantOK    bool
		summaries int
	}{
		{name: "recovered", wantOK: true, summaries: 1},
		{name: "compaction off", disable: true},
		{name: "PreCompact blocks", block: true},
		{name: "refused again", stubborn: true, summaries: 1},
		{name: "overflows again at once", refetch: true, summaries: 1},
		{name: "only the prompt", stubborn: true, fresh: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd, configDir := compactSetup(t)
			srv := agentlooptest.NewTB(t)
			overflowRouter(srv, tc.stubborn, tc.refetch)
			opts := compactOptions(t, srv, cwd, configDir, 0)
			opts.DisableAutoCompact = tc.disable
			opts.MaxTurns = 10 // a compaction loop ends, and fails the test, rather than hanging it
			var log hookLog
			opts.Hooks = log.hooks(tc.block)
			if tc.stubborn && !tc.fresh {
				// The first request already fails; give it a history.
				first := compactOptions(t, srv, cwd, configDir, 0)
				first.DisableAutoCompact = true
				srv.SetRouter(nil)
				srv.Push(agentlooptest.Text("Hello."))
				r, err := agentloop.Query(context.Background(), "Hi.", first).Result()
				if err != nil {
					t.Fatal(err)
				}
				opts.Resume = r.SessionID
				overflowRouter(srv, true, false)
			}
			msgs, err := agentloop.Query(context.Background(), "Look at output 1.", opts).Collect()
			if err != nil && !errors.As(err, new(*agentloop.ResultError)) {
				t.Fatal(err)
			}
			res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			summaries := 0
			for _, r := range srv.Requests() {
				if isSummary(r) {
					summaries++
				}
			}
			if summaries != tc.summaries {
				t.Errorf("%d summary requests, want %d", summaries, tc.summaries)
			}
			if tc.wantOK {
				if res.IsError || res.Result == nil || *res.Result != "All done." {
					t.Fatalf("result %+v", res)
				}
				if bs := boundaries(t, msgs); len(bs) != 1 || bs[0]["trigger"] != "auto" {
					t.Errorf("boundaries %v", bs)
				}
				last := srv.LastRequest()
				if !strings.Contains(last.Params.Messages[0].Content[0].Text, "SUMMARY 1:") {
					t.Errorf("the retried request starts %.200s", last.Params.Messages[0].Content[0].Text)
				}
				return
			}
			if !res.IsError || res.Result == nil || !strings.Contains(*res.Result, "prompt is too long") {
				t.Errorf("want the API's error to end the run; result %+v", res)
			}
		})
	}
}
