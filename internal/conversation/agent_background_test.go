package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
)

// gate is a tool for background subagents that blocks until the test
// releases it (release closed) or its call is cancelled; entered is closed
// when a call starts, cancelled when a call saw its context end.
type gate struct {
	release, cancelled, entered chan struct{}
	once, in                    sync.Once
}

func newGate() *gate {
	return &gate{release: make(chan struct{}), cancelled: make(chan struct{}), entered: make(chan struct{})}
}

func (g *gate) open() { defer func() { _ = recover() }(); close(g.release) }

func (g *gate) tool() agentloop.Tool {
	return agentloop.NewTool("gate", "Waits for the test.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		g.in.Do(func() { close(g.entered) })
		select {
		case <-g.release:
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("gate open")}}, nil
		case <-ctx.Done():
			g.once.Do(func() { close(g.cancelled) })
			return agentloop.ToolResult{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return agentloop.ToolResult{}, errors.New("the gate was never opened")
		}
	}, nil)
}

// bgOpts is a session in bypass mode with the Agent tool, the custom tools
// given, and a background worker subagent (prompt "You work in the
// background.") that may use gate.
func bgOpts(t *testing.T, srv *agentlooptest.Server, extra ...agentloop.Tool) *agentloop.Options {
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent", "TaskStop"}, CustomTools: extra, PermissionMode: agentloop.PermissionBypass,
		NoSessionPersistence: true,
		Agents: map[string]agentloop.AgentDefinition{
			"worker": {Description: "Works", Prompt: "You work in the background.", Model: "sonnet", Tools: []string{"gate"}},
		}}
}

// isWorker matches the requests of the worker subagent.
func isWorker(r *agentlooptest.Request) bool {
	return strings.Contains(r.SystemText(), "You work in the background.")
}

func bgAgentCall(id string) agentlooptest.Reply {
	return agentlooptest.ToolUse(id, "Agent", map[string]any{"description": "Work alone", "prompt": "Do the work.",
		"subagent_type": "worker", "run_in_background": true})
}

// sysField decodes field of a system message.
func sysField(m *agentloop.SystemMessage, field string) string {
	var s string
	raw := m.Data[field]
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

var agentIDRe = regexp.MustCompile(`agentId: (a[0-9a-f]+)`)

// TestAgentBackground: a background Agent call returns async_launched
// before the subagent finishes (the subagent's gate opens only once the
// parent's stream shows that result); task_started (backgrounded) and
// task_notification (completed, with the output file) reach the stream; the
// output file holds the subagent's answer; and when the parent is done
// while the subagent still runs, the run waits and gives the model a turn
// with the notification.
func TestAgentBackground(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		bgAgentCall("toolu_a"),
		agentlooptest.Text("I will wait for the worker."),
		agentlooptest.Text("The worker says WORKER DONE."),
	)
	srv.Route(isWorker, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), agentlooptest.Text("WORKER DONE"))
	g := newGate()
	var kinds []string
	var launched, output string
	var started, notified *agentloop.SystemMessage
	for m, err := range agentloop.Query(context.Background(), "Start the worker.", bgOpts(t, srv, g.tool())) {
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			kinds = append(kinds, "system/"+m.Subtype)
			switch m.Subtype {
			case "task_started":
				started = m
			case "task_notification":
				notified = m
				b, err := os.ReadFile(sysField(m, "output_file"))
				if err != nil {
					t.Errorf("reading the output file: %v", err)
				}
				output = string(b)
			}
		case *agentloop.UserMessage:
			for _, b := range m.Message.Content {
				if b.ToolUseID == "toolu_a" {
					launched = b.ResultText()
					if st, _ := json.Marshal(m.ToolUseResult); !strings.Contains(string(st), `"status":"async_launched"`) {
						t.Errorf("Agent result structured = %s, want status async_launched", st)
					}
					g.open() // the subagent may finish only now
				}
			}
		}
	}
	if !strings.Contains(launched, "running in the background") {
		t.Fatalf("Agent result = %q, want a background launch", launched)
	}
	if started == nil || sysField(started, "is_backgrounded") != "true" || sysField(started, "task_type") != "local_agent" {
		t.Fatalf("task_started = %+v, want a backgrounded local_agent", started)
	}
	if notified == nil || sysField(notified, "status") != "completed" || sysField(notified, "summary") != "WORKER DONE" {
		t.Fatalf("task_notification = %+v, want completed with the answer (stream %v)", notified, kinds)
	}
	if !strings.Contains(output, "WORKER DONE") {
		t.Errorf("output file = %q, want the subagent's answer", output)
	}
	id := agentIDRe.FindStringSubmatch(launched)
	if id == nil || sysField(notified, "task_id") != id[1] {
		t.Errorf("notification task_id %q, launch said %q", sysField(notified, "task_id"), launched)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if isWorker(last) || !strings.Contains(last.LastUserText(), "WORKER DONE") || !strings.Contains(last.LastUserText(), "task-notification") {
		t.Errorf("the parent's follow-up turn = %q, want the notification with the answer", last.LastUserText())
	}
}

// TestAgentBackgroundTaskStop: TaskStop stops a running background
// subagent (its tool call is cancelled), the notification says stopped,
// and the model hears of it with the TaskStop result.
func TestAgentBackgroundTaskStop(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		bgAgentCall("toolu_a"),
		// the TaskStop call is answered by the router below
		agentlooptest.Text("Stopped it."),
	)
	srv.Route(isWorker, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}))
	var stopSent atomic.Bool
	g := newGate()
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		res, ok := r.ToolResult("toolu_a")
		if !ok || stopSent.Load() {
			return agentlooptest.Reply{}, false
		}
		select {
		case <-g.entered: // stop the subagent while it works
		case <-time.After(5 * time.Second):
		}
		id := agentIDRe.FindStringSubmatch(res.ResultText())
		if id == nil {
			return agentlooptest.Reply{}, false
		}
		stopSent.Store(true)
		return agentlooptest.ToolUse("toolu_stop", "TaskStop", map[string]any{"task_id": id[1]}), true
	})
	msgs, err := agentloop.Query(context.Background(), "Start and stop the worker.", bgOpts(t, srv, g.tool())).Collect()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.cancelled:
	default:
		t.Fatal("the subagent's gate call was not cancelled")
	}
	stopText, isErr := toolResultText(msgs, "toolu_stop")
	if isErr || !strings.Contains(stopText, "Stopped background subagent") {
		t.Fatalf("TaskStop result = %q (error %v)", stopText, isErr)
	}
	var status string
	for _, m := range msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "task_notification" {
			status = sysField(s, "status")
		}
	}
	if status != "stopped" {
		t.Errorf("task_notification status = %q, want stopped", status)
	}
	last := srv.LastRequest()
	if !strings.Contains(last.LastUserText(), "has ended: stopped") {
		t.Errorf("the model was not told of the stop: %q", last.LastUserText())
	}
	if r := lastResult(t, msgs); r.IsError {
		t.Errorf("result %s: %v", r.Subtype, r.Errors)
	}
}

// TestAgentBackgroundBudget: a background subagent whose reply crosses the
// session's budget is stopped (notification stopped), a new spawn is then
// refused with the budget message, and the main loop ends with
// error_max_budget_usd.
func TestAgentBackgroundBudget(t *testing.T) {
	g := newGate()
	stopped := make(chan struct{})
	wait := agentloop.NewTool("wait", "Waits for the worker.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		g.open()
		select {
		case <-stopped:
		case <-ctx.Done():
			return agentloop.ToolResult{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return agentloop.ToolResult{}, context.DeadlineExceeded
		}
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock("waited")}}, nil
	}, nil)
	srv := agentlooptest.NewTB(t,
		withUsage(bgAgentCall("toolu_a"), 1000, 10),
		withUsage(agentlooptest.Blocks(agentlooptest.ToolUseBlock("toolu_w", "wait", map[string]any{"text": "x"}),
			agentlooptest.ToolUseBlock("toolu_b", "Agent", map[string]any{"description": "Again", "prompt": "More.",
				"subagent_type": "worker", "run_in_background": true})), 1000, 10),
	)
	srv.Route(isWorker, withUsage(agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), 1000, 10),
		withUsage(agentlooptest.Text("expensive"), 800_000, 0)) // $1.60 on sonnet: crosses the $1 cap
	opts := bgOpts(t, srv, g.tool(), wait)
	opts.MaxBudgetUSD = 1
	var status string
	var msgs []agentloop.Message
	for m, err := range agentloop.Query(context.Background(), "Spend.", opts) {
		if m != nil {
			msgs = append(msgs, m)
		}
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "task_notification" {
			status = sysField(s, "status")
			close(stopped)
		}
		_ = err
	}
	if status != "stopped" {
		t.Errorf("task_notification status = %q, want stopped", status)
	}
	refusal, isErr := toolResultText(msgs, "toolu_b")
	if !isErr || !strings.Contains(refusal, "Budget limit reached") {
		t.Errorf("second spawn = %q (error %v), want the budget refusal", refusal, isErr)
	}
	if r := lastResult(t, msgs); r.Subtype != "error_max_budget_usd" {
		t.Errorf("result subtype %q, want error_max_budget_usd", r.Subtype)
	}
}

// TestAgentBackgroundCancel: cancelling a query while the parent waits for
// a background subagent stops the subagent, and the conversation goes on
// with a history the API accepts (the strict fake checks the next
// request), whose prompt tells the model the subagent was stopped.
func TestAgentBackgroundCancel(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		bgAgentCall("toolu_a"),
		agentlooptest.Text("Waiting for the worker."),
		agentlooptest.Text("Hello again."),
	)
	srv.Route(isWorker, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}))
	g := newGate()
	c, err := agentloop.NewClient(bgOpts(t, srv, g.tool()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for m := range c.Query(ctx, "Start the worker.") {
		if a, ok := m.(*agentloop.AssistantMessage); ok && len(a.Message.Content) > 0 && a.Message.Content[0].Text == "Waiting for the worker." {
			<-g.entered
			cancel() // the parent now waits for the subagent
		}
	}
	select {
	case <-g.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the subagent was not stopped by the cancellation")
	}
	res, err := c.Query(context.Background(), "Are you there?").Result()
	if err != nil || res.IsError {
		t.Fatalf("next query: %v %+v", err, res)
	}
	if last := srv.LastRequest().LastUserText(); !strings.Contains(last, "Are you there?") || !strings.Contains(last, "has ended: stopped") {
		t.Errorf("the next prompt does not tell of the stopped subagent: %q", last)
	}
}

// TestAgentBackgroundClose: Client.Close stops a running background
// subagent.
func TestAgentBackgroundClose(t *testing.T) {
	srv := agentlooptest.NewTB(t, bgAgentCall("toolu_a"), agentlooptest.Text("Waiting."))
	srv.Route(isWorker, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}))
	srv.AllowExhausted()
	g := newGate()
	c, err := agentloop.NewClient(bgOpts(t, srv, g.tool()))
	if err != nil {
		t.Fatal(err)
	}
	for m := range c.Query(context.Background(), "Start the worker.") {
		if a, ok := m.(*agentloop.AssistantMessage); ok && len(a.Message.Content) > 0 && a.Message.Content[0].Text == "Waiting." {
			<-g.entered
			go c.Close()
		}
	}
	select {
	case <-g.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the subagent")
	}
}
