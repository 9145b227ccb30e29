package conversation_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// Prices of the test models, per token (see pricing): the main loop runs on
// the default model, subagents on sonnet.
func opusUSD(in, out int64) float64   { return float64(in)*4/1e6 + float64(out)*20/1e6 }
func sonnetUSD(in, out int64) float64 { return float64(in)*2/1e6 + float64(out)*10/1e6 }

// agentCall is an Agent tool call of the given subagent type.
func agentCall(id, typ string) agentlooptest.Reply {
	return agentlooptest.ToolUse(id, "Agent", map[string]any{"description": "Delegate", "prompt": "Do the " + typ + " part.",
		"subagent_type": typ})
}

// touchCall is a call of the custom touch tool (see testTools).
func touchCall(id string) agentlooptest.Reply {
	return agentlooptest.ToolUse(id, "touch", map[string]any{"text": "x"})
}

// toolResultText finds the tool_result for id among the stream's user
// messages, at any depth.
func toolResultText(msgs []agentloop.Message, id string) (string, bool) {
	for _, m := range msgs {
		u, ok := m.(*agentloop.UserMessage)
		if !ok {
			continue
		}
		for _, b := range u.Message.Content {
			if b.ToolUseID == id {
				return b.ResultText(), b.IsError != nil && *b.IsError
			}
		}
	}
	return "", false
}

func lastResult(t *testing.T, msgs []agentloop.Message) *agentloop.ResultMessage {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if r, ok := msgs[i].(*agentloop.ResultMessage); ok {
			return r
		}
	}
	t.Fatal("no result message")
	return nil
}

// budgetOpts is a session with a $1 budget, the Agent and touch tools in
// bypass mode (so nothing but the budget stops a call), and two subagents
// on sonnet: lead (which may delegate) and worker.
func budgetOpts(t *testing.T, srv *agentlooptest.Server, touched *atomic.Int32) *agentloop.Options {
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: testTools(touched), PermissionMode: agentloop.PermissionBypass,
		MaxBudgetUSD: 1, NoSessionPersistence: true,
		Agents: map[string]agentloop.AgentDefinition{
			"lead":   {Description: "Leads", Prompt: "You lead.", Model: "sonnet"},
			"worker": {Description: "Works", Prompt: "You work.", Model: "sonnet", Tools: []string{"touch"}},
		}}
}

// TestSubagentBudget: a subagent reply that crosses the session's budget is
// paid and counted, its tools do not run, the subagent makes no further
// request, and the main loop ends with error_max_budget_usd before its next
// request. Before the lineage the subagent ran on for every scripted reply.
func TestSubagentBudget(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		withUsage(agentCall("toolu_a", "worker"), 1000, 10),
		withUsage(touchCall("toolu_s1"), 800_000, 0), // $1.60: crosses the $1 cap
		withUsage(touchCall("toolu_s2"), 800_000, 0),
		withUsage(agentlooptest.Text("worker done"), 800_000, 0),
		withUsage(agentlooptest.Text("main done"), 1000, 10))
	var touched atomic.Int32
	msgs, err := agentloop.Query(context.Background(), "go", budgetOpts(t, srv, &touched)).Collect()
	if err == nil {
		t.Fatal("no error after the budget result")
	}
	res := lastResult(t, msgs)
	if res.Subtype != "error_max_budget_usd" || len(res.Errors) != 1 || res.Errors[0] != "Reached maximum budget ($1)" {
		t.Errorf("result %s %v", res.Subtype, res.Errors)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the main loop's first, the subagent's first)", n)
	}
	want := opusUSD(1000, 10) + sonnetUSD(800_000, 0)
	if math.Abs(res.TotalCostUSD-want) > 1e-12 {
		t.Errorf("total_cost_usd %v, want %v", res.TotalCostUSD, want)
	}
	if touched.Load() != 0 {
		t.Errorf("the subagent's tool ran %d times after the budget was spent", touched.Load())
	}
	text, isErr := toolResultText(msgs, "toolu_a")
	if !isErr || !strings.Contains(text, "Reached maximum budget ($1)") {
		t.Errorf("Agent result (error %v) %q", isErr, text)
	}
}

// TestNestedSubagentBudget: the budget binds at every depth. A grandchild
// spends it; the next Agent call of its parent is refused with the
// reference's "Budget limit reached" error without a request, and every
// loop above ends before its next request.
func TestNestedSubagentBudget(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		withUsage(agentCall("toolu_a", "lead"), 1000, 10),
		withUsage(agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_n1", "Agent", map[string]any{"description": "one", "prompt": "Part one.", "subagent_type": "worker"}),
			agentlooptest.ToolUseBlock("toolu_n2", "Agent", map[string]any{"description": "two", "prompt": "Part two.", "subagent_type": "worker"}),
		), 2000, 20),
		withUsage(touchCall("toolu_w1"), 800_000, 0), // the grandchild crosses the cap
		withUsage(agentlooptest.Text("worker done"), 10, 1),
		withUsage(agentlooptest.Text("worker two done"), 10, 1),
		withUsage(agentlooptest.Text("lead done"), 10, 1),
		withUsage(agentlooptest.Text("main done"), 10, 1))
	var touched atomic.Int32
	msgs, err := agentloop.Query(context.Background(), "go", budgetOpts(t, srv, &touched)).Collect()
	if err == nil {
		t.Fatal("no error after the budget result")
	}
	res := lastResult(t, msgs)
	if res.Subtype != "error_max_budget_usd" || res.TerminalReason != "budget_exhausted" {
		t.Errorf("result %s (%s) %v", res.Subtype, res.TerminalReason, res.Errors)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Errorf("%d requests, want 3 (main, lead, first worker)", len(reqs))
	}
	if len(reqs) >= 3 && !strings.Contains(reqs[2].SystemText(), "You work.") {
		t.Errorf("third request is not the worker's: %q", reqs[2].SystemText())
	}
	want := opusUSD(1000, 10) + sonnetUSD(2000, 20) + sonnetUSD(800_000, 0)
	if math.Abs(res.TotalCostUSD-want) > 1e-12 {
		t.Errorf("total_cost_usd %v, want %v", res.TotalCostUSD, want)
	}
	if touched.Load() != 0 {
		t.Errorf("touch ran %d times", touched.Load())
	}
	if text, isErr := toolResultText(msgs, "toolu_n2"); !isErr || !strings.HasPrefix(text, "Budget limit reached ($1.6") ||
		!strings.Contains(text, "spent of the $1 maximum") {
		t.Errorf("second spawn (error %v): %q", isErr, text)
	}
	if text, isErr := toolResultText(msgs, "toolu_a"); !isErr || !strings.Contains(text, "Reached maximum budget ($1)") {
		t.Errorf("lead's Agent result (error %v): %q", isErr, text)
	}
}

// TestSubagentBudgetCountsPerQuery: a Client's second prompt gets the whole
// budget again, subagents included, as the reference counts the budget from
// each query's start.
func TestSubagentBudgetCountsPerQuery(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		withUsage(agentCall("toolu_a", "worker"), 1000, 10),
		withUsage(agentlooptest.Text("half"), 300_000, 0), // $0.60
		withUsage(agentlooptest.Text("first done"), 1000, 10),
		withUsage(agentCall("toolu_b", "worker"), 1000, 10),
		withUsage(agentlooptest.Text("half again"), 300_000, 0), // $0.60: $1.20 in all, $0.60 in this query
		withUsage(agentlooptest.Text("second done"), 1000, 10))
	var touched atomic.Int32
	c, err := agentloop.NewClient(budgetOpts(t, srv, &touched))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"one", "two"} {
		res, err := c.Query(context.Background(), p).Result()
		if err != nil || res.Subtype != "success" {
			t.Fatalf("prompt %s: %v %+v", p, err, res)
		}
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
}
