package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// Every way a run can end early must leave a history the Messages API
// accepts, in memory and in the transcript alike. Each case disrupts one
// query of a Client against the strict fake; then the transcript on disk
// is forked (the history a resume sends) and the client asks again (the
// history it holds): both requests must be accepted and carry the same
// messages.
func TestEveryExitLeavesAValidHistory(t *testing.T) {
	type lifecycleCase struct {
		name    string
		replies []agentlooptest.Reply
		opts    func(*agentloop.Options, *lifecycleEnv)
		// disrupt runs the first query; it may cancel, break or just read.
		disrupt func(t *testing.T, c *agentloop.Client, env *lifecycleEnv)
		// results are the tool results the next request must carry, by id:
		// the text, or "" for any text from a tool that ran.
		results map[string]string
	}
	two := agentlooptest.Blocks(
		agentlooptest.ToolUseBlock("toolu_1", "echo", map[string]any{"text": "one"}),
		agentlooptest.ToolUseBlock("toolu_2", "echo", map[string]any{"text": "two"}))
	for _, tc := range []lifecycleCase{
		{
			name: "cancel during a slow tool",
			replies: []agentlooptest.Reply{agentlooptest.Blocks(
				agentlooptest.ToolUseBlock("toolu_1", "slow", map[string]any{}),
				agentlooptest.ToolUseBlock("toolu_2", "echo", map[string]any{"text": "two"}))},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() { <-env.started; cancel() }()
				if _, err := c.Query(ctx, "go").Collect(); !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, want context.Canceled", err)
				}
			},
			results: map[string]string{"toolu_1": "", "toolu_2": engine.RejectedText},
		},
		{
			name:    "break out of the range during tools",
			replies: []agentlooptest.Reply{two},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				for m, err := range c.Query(context.Background(), "go") {
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := m.(*agentloop.UserMessage); ok {
						break
					}
				}
			},
			results: map[string]string{"toolu_1": "one", "toolu_2": "[Request interrupted by user for tool use]"},
		},
		{
			name:    "cancel between turns",
			replies: []agentlooptest.Reply{two},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				n := 0
				for m, err := range c.Query(ctx, "go") {
					if _, ok := m.(*agentloop.UserMessage); ok {
						if n++; n == 2 {
							cancel()
						}
					}
					if err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("error %v, want context.Canceled", err)
					}
				}
			},
			results: map[string]string{"toolu_1": "one", "toolu_2": "two"},
		},
		{
			name:    "a hook halts after the first tool",
			replies: []agentlooptest.Reply{two},
			opts: func(o *agentloop.Options, env *lifecycleEnv) {
				o.Hooks = map[hooks.Event][]hooks.Matcher{hooks.PostToolUse: cb(func(in hooks.Input) hooks.Output {
					return hooks.Output{Halt: true, StopReason: "enough"}
				})}
			},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				res, err := c.Query(context.Background(), "go").Result()
				if err != nil || res.TerminalReason != "hook_stopped" {
					t.Errorf("result %+v, error %v; want hook_stopped", res, err)
				}
			},
			results: map[string]string{"toolu_1": "one", "toolu_2": "two"},
		},
		{
			name:    "a permission interrupt",
			replies: []agentlooptest.Reply{two},
			opts: func(o *agentloop.Options, env *lifecycleEnv) {
				o.PermissionMode = agentloop.PermissionDefault
				o.CanUseTool = func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					return agentloop.PermissionResult{Behavior: "deny", Message: "no", Interrupt: true}, nil
				}
			},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				c.Query(context.Background(), "go").Collect()
			},
			results: map[string]string{"toolu_1": "no", "toolu_2": ""},
		},
		{
			name:    "budget crossed by a reply with calls",
			replies: []agentlooptest.Reply{withUsage(two, 500000, 100000)},
			opts:    func(o *agentloop.Options, env *lifecycleEnv) { o.MaxBudgetUSD = 0.01 },
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				res, _ := c.Query(context.Background(), "go").Result()
				if res == nil || res.Subtype != "error_max_budget_usd" {
					t.Errorf("result %+v, want error_max_budget_usd", res)
				}
			},
			results: map[string]string{"toolu_1": "The budget of $0.01 was reached before this tool could run.",
				"toolu_2": "The budget of $0.01 was reached before this tool could run."},
		},
		{
			name: "cancel during model streaming",
			replies: []agentlooptest.Reply{func() agentlooptest.Reply {
				r := agentlooptest.Blocks(model.TextBlock("Let me look."),
					agentlooptest.ToolUseBlock("toolu_1", "echo", map[string]any{"text": "one"}))
				r.EventDelay = 20 * time.Millisecond
				return r
			}()},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				for m := range c.Query(ctx, "go") {
					if _, ok := m.(*agentloop.AssistantMessage); ok {
						cancel()
					}
				}
			},
			results: map[string]string{}, // the partial reply is in neither
		},
		{
			name:    "break out of the range during model streaming",
			replies: []agentlooptest.Reply{agentlooptest.Blocks(model.TextBlock("Let me look."), agentlooptest.ToolUseBlock("toolu_1", "echo", map[string]any{"text": "one"}))},
			disrupt: func(t *testing.T, c *agentloop.Client, env *lifecycleEnv) {
				for m := range c.Query(context.Background(), "go") {
					if _, ok := m.(*agentloop.AssistantMessage); ok {
						break
					}
				}
			},
			results: map[string]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newLifecycleEnv(t, tc.replies...)
			if tc.opts != nil {
				tc.opts(&env.opts, env)
			}
			c, err := agentloop.NewClient(&env.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tc.disrupt(t, c, env)
			next := env.checkNext(t, c)
			got := map[string]string{}
			for _, m := range next {
				for _, b := range m.Content {
					if b.Type == model.TypeToolResult {
						got[b.ToolUseID] = b.ResultText()
						if b.IsError != nil && *b.IsError && tc.results[b.ToolUseID] == "" {
							got[b.ToolUseID] = "" // a tool's own error: any text
						}
					}
				}
			}
			for id, want := range tc.results {
				if want == "" {
					if _, ok := got[id]; ok {
						got[id] = ""
					}
				}
			}
			if diff := cmp.Diff(tc.results, got); diff != "" {
				t.Errorf("tool results in the next request (-want +got):\n%s", diff)
			}
		})
	}
}

// lifecycleEnv is a client's world: the strict fake, the options, and the
// tools "slow" (waits for cancellation; it closes started when called) and
// "echo" (answers its text).
type lifecycleEnv struct {
	srv     *agentlooptest.Server
	opts    agentloop.Options
	started chan struct{}
}

func newLifecycleEnv(t *testing.T, replies ...agentlooptest.Reply) *lifecycleEnv {
	t.Helper()
	env := &lifecycleEnv{srv: agentlooptest.NewTB(t, replies...), started: make(chan struct{})}
	env.srv.Route(func(r *agentlooptest.Request) bool { return strings.HasSuffix(r.LastUserText(), "again") },
		agentlooptest.Text("fork ok"), agentlooptest.Text("client ok"))
	slow := agentloop.NewTool("slow", "Waits until cancelled.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		close(env.started)
		<-ctx.Done()
		return agentloop.ToolResult{}, ctx.Err()
	}, nil)
	echo := agentloop.NewTool("echo", "Answers its text.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.TextResult(in.Text), nil
	}, nil)
	env.opts = agentloop.Options{Provider: provider(t, env.srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		Tools: []string{}, CustomTools: []agentloop.Tool{slow, echo}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}}
	return env
}

// checkNext forks the session from its transcript and asks again, then asks
// the client again; the strict fake must accept both, and both must send the
// same history. It returns the client's messages.
// resumedForm is what a resumed session sends for msgs, the next request
// of the session that lived through its history: after an interrupt's
// marker the live session sends the marker, a newline and the prompt in
// one user turn, a resumed one the marker, the synthetic answer to it and
// the prompt (as the reference does).
func resumedForm(msgs []model.Message) []model.Message {
	n := len(msgs)
	if n == 0 {
		return msgs
	}
	last := msgs[n-1]
	for i, b := range last.Content {
		if b.Type != model.TypeText || (b.Text != engine.InterruptedMarker+"\n" && b.Text != engine.Interrupted+"\n") {
			continue
		}
		head := append(append([]model.Content(nil), last.Content[:i]...), model.TextBlock(strings.TrimSuffix(b.Text, "\n")))
		out := append(append([]model.Message(nil), msgs[:n-1]...),
			model.Message{Role: "user", Content: head},
			model.Message{Role: "assistant", Content: []model.Content{model.TextBlock(engine.NoResponse)}},
			model.Message{Role: "user", Content: last.Content[i+1:]})
		return out
	}
	return msgs
}

func (env *lifecycleEnv) checkNext(t *testing.T, c *agentloop.Client) []model.Message {
	t.Helper()
	fork := env.opts
	fork.Resume, fork.ForkSession = c.SessionID(), true
	fork.Hooks, fork.CanUseTool, fork.MaxBudgetUSD = nil, nil, 0
	if _, err := agentloop.Query(context.Background(), "again", &fork).Result(); err != nil {
		t.Fatalf("a fork of the transcript on disk: %v", err)
	}
	if _, err := c.Query(context.Background(), "again").Result(); err != nil {
		t.Fatalf("the client's next query: %v", err)
	}
	reqs := env.srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	disk, mem := reqs[len(reqs)-2].Params.Messages, reqs[len(reqs)-1].Params.Messages
	if diff := cmp.Diff(disk, resumedForm(mem), cmp.Transformer("json", func(r json.RawMessage) any {
		var v any
		_ = json.Unmarshal(r, &v)
		return v
	})); diff != "" {
		t.Errorf("history from the transcript (-) and in memory (+) differ:\n%s", diff)
	}
	return mem
}
