package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// newOptsTest is the options of the tests of this file: the scripted
// server, no tools, no settings files.
func newOptsTest(t *testing.T, srv *agentlooptest.Server) *agentloop.Options {
	t.Helper()
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		Tools: []string{}, SettingSources: []settings.SettingSource{}}
}

// TestBetasOption: Options.Betas go out in the anthropic-beta header of
// every request, unknown names included, and are listed in init.
func TestBetasOption(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	o := newOptsTest(t, srv)
	o.Betas = []string{"context-1m-2025-08-07", "made-up-beta-2099-01-01"}
	msgs, err := agentloop.Query(context.Background(), "hi", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o.Betas, srv.Requests()[0].Params.Betas); d != "" {
		t.Errorf("anthropic-beta values (-want +got):\n%s", d)
	}
	if got := mcpInitOf(msgs).Init.Betas; !cmp.Equal(got, o.Betas) {
		t.Errorf("init betas = %v, want %v", got, o.Betas)
	}
}

// TestBetasSubagent: subagents' requests carry the session's betas too.
func TestBetasSubagent(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Look", "prompt": "Look around."}),
		agentlooptest.Text("Nothing here."), agentlooptest.Text("done"))
	o := newOptsTest(t, srv)
	o.Tools = []string{"Agent"}
	o.Betas = []string{"context-1m-2025-08-07"}
	if _, err := agentloop.Query(context.Background(), "hi", o).Result(); err != nil {
		t.Fatal(err)
	}
	for i, r := range srv.Requests() {
		if !cmp.Equal(r.Params.Betas, o.Betas) {
			t.Errorf("request %d: betas %v, want %v", i, r.Params.Betas, o.Betas)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (main, subagent, main)", n)
	}
}

// TestTaskBudgetOption: TaskBudget is sent as output_config.task_budget
// with its beta, next to the other betas.
func TestTaskBudgetOption(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	o := newOptsTest(t, srv)
	o.Betas = []string{"context-1m-2025-08-07"}
	o.TaskBudget = &agentloop.TaskBudget{Total: 50000}
	if _, err := agentloop.Query(context.Background(), "hi", o).Result(); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if d := cmp.Diff([]string{"context-1m-2025-08-07", "task-budgets-2026-03-13"}, r.Params.Betas); d != "" {
		t.Errorf("anthropic-beta values (-want +got):\n%s", d)
	}
	if !strings.Contains(string(r.Body), `"task_budget":{"type":"tokens","total":50000}`) {
		t.Errorf("request body lacks the task budget: %s", r.Body)
	}
	if o.Betas[0] != "context-1m-2025-08-07" || len(o.Betas) != 1 {
		t.Errorf("the caller's Betas were changed: %v", o.Betas)
	}
}

// TestEmptySystemPrompt: EmptySystemPrompt sends no system block at all,
// or only AppendSystemPrompt's.
func TestEmptySystemPrompt(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"), agentlooptest.Text("ok"))
	o := newOptsTest(t, srv)
	o.EmptySystemPrompt = true
	if _, err := agentloop.Query(context.Background(), "hi", o).Result(); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if len(r.Params.System) != 0 || strings.Contains(string(r.Body), `"system"`) {
		t.Errorf("system = %+v, want none", r.Params.System)
	}
	if n := len(r.Params.Messages[0].Content); n != 1 {
		t.Errorf("first message has %d blocks, want only the prompt", n)
	}
	o = newOptsTest(t, srv)
	o.EmptySystemPrompt, o.AppendSystemPrompt = true, "ONLY THIS"
	if _, err := agentloop.Query(context.Background(), "hi", o).Result(); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].SystemText(); got != "ONLY THIS" {
		t.Errorf("system text = %q, want the appended text alone", got)
	}
}

// TestNewOptionsInvalid: the new options' values that cannot be used are
// ErrInvalidOption.
func TestNewOptionsInvalid(t *testing.T) {
	for name, set := range map[string]func(*agentloop.Options){
		"empty beta":               func(o *agentloop.Options) { o.Betas = []string{""} },
		"beta with comma":          func(o *agentloop.Options) { o.Betas = []string{"a,b"} },
		"zero task budget":         func(o *agentloop.Options) { o.TaskBudget = &agentloop.TaskBudget{} },
		"empty and custom":         func(o *agentloop.Options) { o.EmptySystemPrompt, o.SystemPrompt = true, "x" },
		"resume at, no resume":     func(o *agentloop.Options) { o.ResumeSessionAt = "u" },
		"drops turn, no resume at": func(o *agentloop.Options) { o.Resume, o.ResumeDropsTurn = "s", "u" },
		"unknown agent":            func(o *agentloop.Options) { o.Agent = "nobody-by-this-name" },
	} {
		t.Run(name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t)
			o := newOptsTest(t, srv)
			set(o)
			_, err := agentloop.Query(context.Background(), "hi", o).Result()
			if !errors.Is(err, agentloop.ErrInvalidOption) {
				t.Errorf("err = %v, want ErrInvalidOption", err)
			}
			if name == "unknown agent" && (err == nil || !strings.Contains(err.Error(), "nobody-by-this-name")) {
				t.Errorf("err = %v, want it to name the agent", err)
			}
		})
	}
}
