package conversation_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
)

const workerPrompt = "You are a worker subagent."

// isCompactingWorker tells the subagent's conversation requests from the main
// loop's.
func isCompactingWorker(r *agentlooptest.Request) bool {
	return !isSummary(r) && strings.Contains(r.SystemText(), workerPrompt)
}

// TestSubagentAutoCompaction: a subagent whose own history outgrows the
// window of its definition's autoCompactWindow compacts like the main loop:
// none of its requests passes that window, PreCompact and PostCompact run
// with its agent id, the summaries cost counts in the session's total, and
// the main loop (with the model's large window) never compacts.
func TestSubagentAutoCompaction(t *testing.T) {
	const window, turns = 20_000, 60
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	var mu sync.Mutex
	worker, summaries, mains := 0, 0, 0
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		var rep agentlooptest.Reply
		switch {
		case isSummary(r):
			summaries++
			rep = agentlooptest.Text(fmt.Sprintf("SUMMARY %d: read big outputs.", summaries))
		case isCompactingWorker(r) && worker < turns-1:
			worker++
			rep = agentlooptest.ToolUse(fmt.Sprintf("toolu_w%d", worker), "big", map[string]any{"n": worker})
		case isCompactingWorker(r):
			rep = agentlooptest.Text("Worker finished.")
		case mains == 0:
			mains++
			rep = agentCall("toolu_agent", "worker")
		default:
			mains++
			rep = agentlooptest.Text("Main done.")
		}
		rep.Usage = model.Usage{InputTokens: tokens(r), OutputTokens: 50}
		return rep, true
	})
	var log hookLog
	opts := &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configDir,
		SystemPrompt: "You are a test agent.", Tools: []string{"Agent"}, CustomTools: []agentloop.Tool{compactBigTool(6000)},
		PermissionMode: agentloop.PermissionBypass, SettingSources: []settings.SettingSource{settings.Project},
		Hooks: log.hooks(false),
		Agents: map[string]agentloop.AgentDefinition{
			"worker": {Description: "Works", Prompt: workerPrompt, Tools: []string{"big"}, AutoCompactWindow: window},
		},
	}
	msgs, err := agentloop.Query(context.Background(), "Delegate the outputs.", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := lastResult(t, msgs)
	if res.Subtype != "success" || res.IsError {
		t.Fatalf("result %s: %v", res.Subtype, res.Errors)
	}
	var cost float64
	workerReqs := 0
	for i, r := range srv.Requests() {
		p, _, _ := pricing.Lookup(r.Params.Model)
		cost += p.Cost(r.Reply.Usage)
		if isCompactingWorker(r) {
			workerReqs++
			if n := tokens(r); n > window {
				t.Errorf("subagent request %d is %d tokens, over its %d window", i, n, window)
			}
		}
	}
	if summaries < 2 {
		t.Fatalf("%d compactions in %d subagent turns; want at least 2", summaries, turns)
	}
	if workerReqs != turns {
		t.Errorf("%d subagent requests, want %d", workerReqs, turns)
	}
	if mains != 2 {
		t.Errorf("%d main-loop requests, want 2", mains)
	}
	if len(log.pre) != summaries || len(log.post) != summaries {
		t.Fatalf("PreCompact ran %d times, PostCompact %d, for %d compactions", len(log.pre), len(log.post), summaries)
	}
	for i := range log.pre {
		if log.pre[i].AgentID == "" || log.pre[i].AgentType != "worker" || log.pre[i].Trigger != "auto" ||
			log.post[i].AgentID != log.pre[i].AgentID || !strings.HasPrefix(log.post[i].CompactSummary, "SUMMARY ") {
			t.Errorf("hook inputs %d: %+v %+v", i, log.pre[i].Base, log.post[i].Base)
		}
	}
	if math.Abs(res.TotalCostUSD-cost) > 1e-9 {
		t.Errorf("total_cost_usd = %v, want %v (the subagent's summaries included)", res.TotalCostUSD, cost)
	}
	if text, isErr := toolResultText(msgs, "toolu_agent"); isErr || !strings.Contains(text, "Worker finished.") {
		t.Errorf("Agent result (error %v): %.300s", isErr, text)
	}
}

// TestSubagentCompactIsNotACommand: a subagent prompt of "/compact" goes to
// the model as text; it does not compact the (empty) subagent history.
func TestSubagentCompactIsNotACommand(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "d", "prompt": "/compact", "subagent_type": "worker"}),
		agentlooptest.Text("Worker saw the text."),
		agentlooptest.Text("Main done."))
	opts := &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configDir, Tools: []string{"Agent"},
		PermissionMode: agentloop.PermissionBypass, SettingSources: []settings.SettingSource{},
		Agents: map[string]agentloop.AgentDefinition{"worker": {Description: "Works", Prompt: workerPrompt, Tools: []string{}}},
	}
	msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(msgs, "toolu_a"); isErr || !strings.Contains(text, "Worker saw the text.") {
		t.Errorf("Agent result (error %v): %.300s", isErr, text)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// TestAgentAutoCompactWindowDiagnostics: a positive autoCompactWindow is
// honoured and not reported; a negative one is reported.
func TestAgentAutoCompactWindowDiagnostics(t *testing.T) {
	for _, w := range []int{30_000, -5} {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		_, diags := runFiles(t, srv, t.TempDir(), "go", &agentloop.Options{SettingSources: []settings.SettingSource{},
			Agents: map[string]agentloop.AgentDefinition{"w": {Description: "Works", Prompt: workerPrompt, AutoCompactWindow: w}}})
		reported := hasDiag(diags, agentloop.DiagAgent, "autoCompactWindow")
		if reported != (w < 0) {
			t.Errorf("autoCompactWindow %d: reported %v: %+v", w, reported, diags)
		}
	}
}
