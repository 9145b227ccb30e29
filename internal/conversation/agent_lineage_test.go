package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// isSubagentRequest tells a subagent's requests from the main loop's by the
// system prompts of the test's worker and of the general-purpose agent.
func isSubagentRequest(r *agentlooptest.Request) bool {
	return strings.HasPrefix(r.SystemText(), "You work.") || strings.Contains(r.SystemText(), "subagent working on one task")
}

// TestSubagentTurnLimit: every subagent has a turn limit: its definition's,
// bounded by its parent's, else lineage's default (100). Before the lineage
// the general-purpose subagent ran without one.
func TestSubagentTurnLimit(t *testing.T) {
	tests := []struct {
		name       string
		def        agentloop.AgentDefinition
		typ        string
		parentMax  int
		wantRounds int
	}{
		{name: "general-purpose gets the default", typ: "general-purpose", wantRounds: 100},
		{name: "definition", typ: "worker", def: agentloop.AgentDefinition{MaxTurns: 3}, wantRounds: 3},
		{name: "the parent's limit binds", typ: "worker", def: agentloop.AgentDefinition{MaxTurns: 5}, parentMax: 2, wantRounds: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentCall("toolu_a", tt.typ), agentlooptest.Text("main done"))
			echo := agentlooptest.ToolUse("", "echo", map[string]any{"text": "again"})
			srv.Route(isSubagentRequest, repeat(echo, 150)...)
			def := tt.def
			def.Description, def.Prompt = "Works", "You work."
			var touched atomic.Int32
			opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
				Tools: []string{"Agent"}, CustomTools: testTools(&touched), NoSessionPersistence: true, MaxTurns: tt.parentMax,
				Agents: map[string]agentloop.AgentDefinition{"worker": def}}
			msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
			if err != nil {
				t.Fatal(err)
			}
			sub := 0
			for _, r := range srv.Requests() {
				if isSubagentRequest(r) {
					sub++
				}
			}
			if sub != tt.wantRounds {
				t.Errorf("%d subagent requests, want %d", sub, tt.wantRounds)
			}
			text, isErr := toolResultText(msgs, "toolu_a")
			if !isErr || !strings.Contains(text, "Reached maximum number of turns") {
				t.Errorf("Agent result (error %v): %q", isErr, text)
			}
		})
	}
}

// TestSubagentToolHooks: PreToolUse, PostToolUse and PostToolUseFailure see
// a subagent's calls with its agent_id and agent_type; the main loop's
// calls carry neither. SubagentStart and SubagentStop bracket the subagent
// with the same id.
func TestSubagentToolHooks(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_m", "echo", map[string]any{"text": "main"}),
		agentCall("toolu_a", "worker"),
		agentlooptest.ToolUse("toolu_s1", "echo", map[string]any{"text": "sub"}),
		agentlooptest.ToolUse("toolu_s2", "fail", map[string]any{"text": "sub"}),
		agentlooptest.Text("worker done"),
		agentlooptest.Text("main done"))
	type seen struct{ Event, Tool, AgentID, AgentType string }
	var mu sync.Mutex
	var got []seen
	record := func(ev hooks.Event) []hooks.Matcher {
		return cb(func(in hooks.Input) hooks.Output {
			mu.Lock()
			defer mu.Unlock()
			switch in := in.(type) {
			case hooks.PreToolUseInput:
				got = append(got, seen{string(ev), in.ToolName, in.AgentID, in.AgentType})
			case hooks.PostToolUseInput:
				got = append(got, seen{string(ev), in.ToolName, in.AgentID, in.AgentType})
			case hooks.PostToolUseFailureInput:
				got = append(got, seen{string(ev), in.ToolName, in.AgentID, in.AgentType})
			case hooks.SubagentStartInput:
				got = append(got, seen{string(ev), "", in.AgentID, in.AgentType})
			case hooks.SubagentStopInput:
				got = append(got, seen{string(ev), "", in.AgentID, in.AgentType})
			}
			return hooks.Output{}
		})
	}
	h := map[hooks.Event][]hooks.Matcher{}
	for _, ev := range []hooks.Event{hooks.PreToolUse, hooks.PostToolUse, hooks.PostToolUseFailure, hooks.SubagentStart, hooks.SubagentStop} {
		h[ev] = record(ev)
	}
	var touched atomic.Int32
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: testTools(&touched), NoSessionPersistence: true, Hooks: h,
		Agents: map[string]agentloop.AgentDefinition{"worker": {Description: "Works", Prompt: "You work."}}}
	if _, err := agentloop.Query(context.Background(), "go", opts).Result(); err != nil {
		t.Fatal(err)
	}
	var id string
	for _, s := range got {
		if s.Event == "SubagentStart" {
			id = s.AgentID
		}
	}
	if !strings.HasPrefix(id, "a") {
		t.Fatalf("no SubagentStart with an agent id: %v", got)
	}
	want := []seen{
		{"PreToolUse", "echo", "", ""}, {"PostToolUse", "echo", "", ""},
		{"PreToolUse", "Agent", "", ""}, {"SubagentStart", "", id, "worker"},
		{"PreToolUse", "echo", id, "worker"}, {"PostToolUse", "echo", id, "worker"},
		{"PreToolUse", "fail", id, "worker"}, {"PostToolUseFailure", "fail", id, "worker"},
		{"SubagentStop", "", id, "worker"}, {"PostToolUse", "Agent", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook inputs (-want +got):\n%s", diff)
	}
}

// TestSubagentStopBlockContinues: a SubagentStop hook that blocks keeps the
// subagent going with the hook's reason as its next turn, as a Stop hook
// does for the main loop; the hand-back is the reply after that.
func TestSubagentStopBlockContinues(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentCall("toolu_a", "worker"),
		agentlooptest.Text("first answer"),
		agentlooptest.Text("second answer"),
		agentlooptest.Text("main done"))
	var inputs []hooks.SubagentStopInput
	h := map[hooks.Event][]hooks.Matcher{hooks.SubagentStop: cb(func(in hooks.Input) hooks.Output {
		s := in.(hooks.SubagentStopInput)
		inputs = append(inputs, s)
		if !s.StopHookActive {
			return hooks.Output{Decision: "block", Reason: "check the tests too"}
		}
		return hooks.Output{}
	})}
	var touched atomic.Int32
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: testTools(&touched), NoSessionPersistence: true, Hooks: h,
		Agents: map[string]agentloop.AgentDefinition{"worker": {Description: "Works", Prompt: "You work."}}}
	msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "check the tests too") {
		t.Errorf("the subagent's second request ends with %q", got)
	}
	if len(inputs) != 2 || inputs[0].LastAssistantMessage != "first answer" || inputs[1].LastAssistantMessage != "second answer" ||
		inputs[0].StopHookActive || !inputs[1].StopHookActive {
		t.Errorf("SubagentStop inputs: %+v", inputs)
	}
	text, isErr := toolResultText(msgs, "toolu_a")
	if isErr || !strings.Contains(text, "  second answer") || strings.Contains(text, "first answer") {
		t.Errorf("Agent result (error %v): %q", isErr, text)
	}
}

// TestDisallowedToolBindsSubagents: a bare DisallowedTools name removes the
// tool from every subagent, whatever its definition lists, and a call to
// it does not run, even in bypassPermissions mode.
func TestDisallowedToolBindsSubagents(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentCall("toolu_a", "shell"),
		agentlooptest.ToolUse("toolu_b", "Bash", map[string]any{"command": "touch marker"}),
		agentlooptest.Text("shell done"),
		agentlooptest.Text("main done"))
	dir := t.TempDir()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir, SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent", "Bash", "Read"}, DisallowedTools: []string{"Bash"}, PermissionMode: agentloop.PermissionBypass,
		NoSessionPersistence: true,
		Agents: map[string]agentloop.AgentDefinition{"shell": {Description: "Runs commands", Prompt: "You run commands.",
			Tools: []string{"Bash", "Read"}}}}
	msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Fatal("the subagent ran the disallowed Bash tool")
	}
	reqs := srv.Requests()
	if got := reqs[1].ToolNames(); !cmp.Equal(got, []string{"Read"}) {
		t.Errorf("subagent tools = %v, want [Read]", got)
	}
	if text, isErr := toolResultText(msgs, "toolu_b"); !isErr || !strings.Contains(text, "No such tool") {
		t.Errorf("Bash result (error %v): %q", isErr, text)
	}
}

// TestPlanModeBindsSubagents: the session's permission mode decides its
// subagents' calls: in plan mode a subagent cannot run a command that
// changes anything, even one its definition lists.
func TestPlanModeBindsSubagents(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentCall("toolu_a", "shell"),
		agentlooptest.ToolUse("toolu_b", "Bash", map[string]any{"command": "touch marker"}),
		agentlooptest.Text("shell done"),
		agentlooptest.Text("main done"))
	dir := t.TempDir()
	var asked []agentloop.PermissionRequest
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir, SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent", "Bash"}, PermissionMode: agentloop.PermissionPlan, NoSessionPersistence: true,
		CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			asked = append(asked, req)
			return agentloop.Deny("not in plan mode"), nil
		},
		Agents: map[string]agentloop.AgentDefinition{"shell": {Description: "Runs commands", Prompt: "You run commands.",
			Tools: []string{"Bash"}}}}
	msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Fatal("the subagent changed the directory in plan mode")
	}
	if text, isErr := toolResultText(msgs, "toolu_b"); !isErr {
		t.Errorf("Bash result not an error: %q", text)
	}
	var bash []agentloop.PermissionRequest
	for _, r := range asked {
		if r.ToolName == "Bash" {
			bash = append(bash, r)
		}
	}
	if len(bash) != 1 || !strings.HasPrefix(bash[0].AgentID, "a") {
		t.Errorf("CanUseTool was asked %+v; want the Bash call once, with the subagent's id", asked)
	}
}

// TestCancelStopsRunningSubagent: cancelling the main loop's context ends a
// subagent waiting on the model at once, and the run with it.
func TestCancelStopsRunningSubagent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled atomic.Int64
	slow := agentlooptest.Text("too late")
	slow.Delay = time.Minute
	slow.Expect = func(*agentlooptest.Request) error {
		cancelled.Store(time.Now().UnixNano())
		cancel()
		return nil
	}
	srv := agentlooptest.NewTB(t, agentCall("toolu_a", "worker"), slow, agentlooptest.Text("main done"))
	var touched atomic.Int32
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: testTools(&touched), NoSessionPersistence: true,
		Agents: map[string]agentloop.AgentDefinition{"worker": {Description: "Works", Prompt: "You work."}}}
	done := make(chan struct{})
	var res *agentloop.ResultMessage
	var err error
	go func() {
		defer close(done)
		res, err = agentloop.Query(ctx, "go", opts).Result()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end after its context was cancelled")
	}
	took := time.Duration(time.Now().UnixNano() - cancelled.Load())
	if took > 5*time.Second {
		t.Errorf("the run ended %v after the cancel", took)
	}
	if err == nil || res == nil || res.Subtype != "error_during_execution" {
		t.Errorf("result %+v, err %v", res, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
