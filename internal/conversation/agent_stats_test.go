package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// Each result carries subagent_stats as the reference's do (recorded runs
// of a foreground subagent that completed, one that was interrupted, a
// background one, and none): the values below are the reference's, but
// by_type's agent name.
func TestSubagentStats(t *testing.T) {
	const zero = `{"spawned":0,"requested":{"background":0,"foreground":0,"unset":0},"started_in_background":0,"max_depth":0,` +
		`"spawned_by_subagents":0,"completed":0,"failed":0,"killed":{"parent":0,"user":0,"system":0},` +
		`"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{}}`
	tests := []struct {
		name       string
		background *bool
		interrupt  bool
		want       string
	}{
		{"completed", ptr(false), false, `{"spawned":1,"requested":{"background":0,"foreground":1,"unset":0},"started_in_background":0,"max_depth":1,` +
			`"spawned_by_subagents":0,"completed":1,"failed":0,"killed":{"parent":0,"user":0,"system":0},` +
			`"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{"reviewer":1}}`},
		{"interrupted", ptr(false), true, `{"spawned":1,"requested":{"background":0,"foreground":1,"unset":0},"started_in_background":0,"max_depth":1,` +
			`"spawned_by_subagents":0,"completed":0,"failed":0,"killed":{"parent":0,"user":1,"system":0},` +
			`"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{"reviewer":1}}`},
		{"background", ptr(true), false, `{"spawned":1,"requested":{"background":1,"foreground":0,"unset":0},"started_in_background":1,"max_depth":1,` +
			`"spawned_by_subagents":0,"completed":1,"failed":0,"killed":{"parent":0,"user":0,"system":0},` +
			`"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{"reviewer":1}}`},
		{"unset", nil, false, `{"spawned":1,"requested":{"background":0,"foreground":0,"unset":1},"started_in_background":0,"max_depth":1,` +
			`"spawned_by_subagents":0,"completed":1,"failed":0,"killed":{"parent":0,"user":0,"system":0},` +
			`"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{"reviewer":1}}`},
		{"none", nil, false, zero},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"description": "Review", "prompt": "Review the code.", "subagent_type": "reviewer"}
			if tc.background != nil {
				in["run_in_background"] = *tc.background
			}
			first := agentlooptest.ToolUse("toolu_a", "Agent", in)
			if tc.name == "none" {
				first = agentlooptest.Text("No subagent.")
			}
			srv := agentlooptest.NewTB(t, first, agentlooptest.Text("Done."), agentlooptest.Text("Noted."))
			srv.AllowExhausted()
			srv.Route(isReviewer, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), agentlooptest.Text("Looks fine."))
			g := newGate()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.interrupt {
				go func() { <-g.entered; cancel() }()
			} else {
				g.open()
			}
			var last *agentloop.ResultMessage
			for m := range agentloop.Query(ctx, "review please", subagentTranscriptOpts(t, srv, g.tool())) {
				if r, ok := m.(*agentloop.ResultMessage); ok {
					last = r
				}
			}
			if last == nil {
				t.Fatal("no result")
			}
			line, _ := json.Marshal(last)
			var got struct {
				Stats json.RawMessage `json:"subagent_stats"`
			}
			_ = json.Unmarshal(line, &got)
			var gotV, wantV any
			_ = json.Unmarshal(got.Stats, &gotV)
			_ = json.Unmarshal([]byte(tc.want), &wantV)
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("subagent_stats (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
