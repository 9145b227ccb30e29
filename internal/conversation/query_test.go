package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/google/go-cmp/cmp"
)

// provider returns an Anthropic provider for srv that does not wait between
// retries, and records the delays it would have waited.
func provider(t *testing.T, srv *agentlooptest.Server, delays *[]time.Duration) model.Provider {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{
		APIKey: "sk-test", BaseURL: srv.URL,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if delays != nil {
				*delays = append(*delays, d)
			}
			return ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type echoIn struct {
	Text string `json:"text" jsonschema:"text to echo"`
}

// testTools are custom tools with known behaviour: echo (read-only), fail
// (returns an error), slow (read-only, waits), boom (panics), touch (writes).
func testTools(touched *atomic.Int32) []agentloop.Tool {
	return []agentloop.Tool{
		agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("echo: " + in.Text)}, Structured: map[string]string{"echoed": in.Text}}, nil
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("fail", "Always fails.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{}, errors.New("disk on fire: " + in.Text)
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("slow", "Waits, then echoes.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return agentloop.ToolResult{}, ctx.Err()
			}
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("slow: " + in.Text)}}, nil
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("boom", "Panics.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			panic("kaboom")
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("touch", "Changes state.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			touched.Add(1)
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("touched")}}, nil
		}, nil),
	}
}

// label names a message for sequence comparisons.
func label(m agentloop.Message) string {
	switch m := m.(type) {
	case *agentloop.SystemMessage:
		return "system/" + m.Subtype
	case *agentloop.AssistantMessage:
		return "assistant:" + m.Message.Content[0].Type
	case *agentloop.UserMessage:
		if m.IsSynthetic {
			return "user:synthetic"
		}
		return "user:" + m.Message.Content[0].Type
	case *agentloop.ResultMessage:
		return "result:" + m.Subtype
	case *agentloop.StreamEventMessage:
		return "event:" + m.EventType()
	}
	return m.Kind()
}

func usage(in, out int64) model.Usage { return model.Usage{InputTokens: in, OutputTokens: out} }

func withUsage(r agentlooptest.Reply, in, out int64) agentlooptest.Reply {
	r.Usage = usage(in, out)
	return r
}

type loopCase struct {
	name      string
	replies   []agentlooptest.Reply
	opts      agentloop.Options
	wantSeq   []string
	wantTurns int
	wantSub   string
	wantErr   bool // a *ResultError after the result
	wantUsage [2]int64
	wantCost  float64
	wantReqs  int
	wantText  string
	check     func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage)
}

func TestLoop(t *testing.T) {
	opus := func(in, out int64) float64 { return float64(in)*4/1e6 + float64(out)*20/1e6 }
	cases := []loopCase{
		{
			name:      "text only",
			replies:   []agentlooptest.Reply{withUsage(agentlooptest.Text("Hello."), 100, 20)},
			wantSeq:   []string{"system/init", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantUsage: [2]int64{100, 20}, wantCost: 0.0008, wantReqs: 1, wantText: "Hello.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				req := srv.Requests()[0]
				if !req.HasCacheControlOnLastBlock() {
					t.Error("first request has no cache breakpoint on its last block")
				}
				if got := req.Params.Model; got != "claude-opus-5-5" {
					t.Errorf("model = %q", got)
				}
				if !req.Params.Stream {
					t.Error("request is not streaming")
				}
				if ua := req.Header.Get("User-Agent"); !strings.Contains(ua, "agentloop") {
					t.Errorf("User-Agent %q does not name agentloop", ua)
				}
			},
		},
		{
			name: "one tool",
			replies: []agentlooptest.Reply{
				withUsage(agentlooptest.Blocks(model.TextBlock("Echoing."), agentlooptest.ToolUseBlock("toolu_1", "echo", map[string]any{"text": "hi"})), 1000, 40),
				withUsage(agentlooptest.Text("Done."), 1100, 10),
			},
			wantSeq:   []string{"system/init", "assistant:text", "assistant:tool_use", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{2100, 50}, wantCost: opus(1000, 40) + opus(1100, 10), wantReqs: 2, wantText: "Done.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				req := srv.Requests()[1]
				got := req.Params.Messages
				if len(got) != 3 || got[1].Role != "assistant" || got[2].Role != "user" {
					t.Fatalf("history roles: %+v", got)
				}
				tr, ok := req.ToolResult("toolu_1")
				if !ok || tr.ResultText() != "echo: hi" || tr.IsError != nil {
					t.Errorf("tool result sent = %+v", tr)
				}
				u := msgs[3].(*agentloop.UserMessage)
				if diff := cmp.Diff(map[string]string{"echoed": "hi"}, u.ToolUseResult); diff != "" {
					t.Errorf("tool_use_result (-want +got):\n%s", diff)
				}
				if len(u.ToolResultMeta) != 1 || u.ToolResultMeta[0].PermissionDecision.Decision != "accept" {
					t.Errorf("tool_result_meta = %+v", u.ToolResultMeta)
				}
				a1, a2 := msgs[1].(*agentloop.AssistantMessage), msgs[2].(*agentloop.AssistantMessage)
				if a1.Message.ID == "" || a1.Message.ID != a2.Message.ID {
					t.Errorf("blocks of one reply have ids %q and %q", a1.Message.ID, a2.Message.ID)
				}
				if a1.Message.Usage.OutputTokens != 1 {
					t.Errorf("assistant usage output = %d, want the message_start value 1", a1.Message.Usage.OutputTokens)
				}
				if !req.HasCacheControlOnLastBlock() {
					t.Error("no cache breakpoint on the tool result")
				}
			},
		},
		{
			name: "two parallel read-only tools",
			replies: []agentlooptest.Reply{
				agentlooptest.Blocks(
					agentlooptest.ToolUseBlock("toolu_a", "slow", map[string]any{"text": "a"}),
					agentlooptest.ToolUseBlock("toolu_b", "echo", map[string]any{"text": "b"})),
				agentlooptest.Text("Both done."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "assistant:tool_use", "user:tool_result", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 3, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "Both done.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				// echo finishes first although it was asked second: results
				// come in completion order, which proves they overlapped.
				first := msgs[3].(*agentloop.UserMessage).Message.Content[0].ToolUseID
				if first != "toolu_b" {
					t.Errorf("first result is for %s, want toolu_b (the faster tool)", first)
				}
				req := srv.Requests()[1]
				last := req.Params.Messages[len(req.Params.Messages)-1]
				if len(last.Content) != 2 {
					t.Fatalf("results sent in %d blocks, want both in one user message", len(last.Content))
				}
			},
		},
		{
			name: "tool error",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_f", "fail", map[string]any{"text": "x"}),
				agentlooptest.Text("It failed."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "It failed.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				tr, _ := srv.Requests()[1].ToolResult("toolu_f")
				if tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "disk on fire: x") {
					t.Errorf("tool result = %+v", tr)
				}
			},
		},
		{
			name: "panicking tool",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_p", "boom", map[string]any{"text": "x"}),
				agentlooptest.Text("Recovered."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "Recovered.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				tr, _ := srv.Requests()[1].ToolResult("toolu_p")
				if tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "kaboom") {
					t.Errorf("tool result = %+v", tr)
				}
			},
		},
		{
			name: "unknown tool",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_u", "Frobnicate", map[string]any{}),
				agentlooptest.Text("No such tool."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "No such tool.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				tr, _ := srv.Requests()[1].ToolResult("toolu_u")
				want := "<tool_use_error>Error: No such tool available: Frobnicate</tool_use_error>"
				if tr.IsError == nil || !*tr.IsError || tr.ResultText() != want {
					t.Errorf("tool result = %q, want %q", tr.ResultText(), want)
				}
				u := msgs[2].(*agentloop.UserMessage)
				if u.ToolUseResult != "Error: No such tool available: Frobnicate" || u.ToolResultMeta != nil {
					t.Errorf("user line = %+v", u)
				}
			},
		},
		{
			name: "invalid tool input",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_v", "echo", map[string]any{"txt": "x"}),
				agentlooptest.Text("Fixed."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "Fixed.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				tr, _ := srv.Requests()[1].ToolResult("toolu_v")
				want := "<tool_use_error>InputValidationError: echo failed due to the following issues:\nThe required parameter `text` is missing\nAn unexpected parameter `txt` was provided</tool_use_error>"
				if diff := cmp.Diff(want, tr.ResultText()); diff != "" || tr.IsError == nil || !*tr.IsError {
					t.Errorf("tool result (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "max turns",
			replies: []agentlooptest.Reply{
				withUsage(agentlooptest.ToolUse("toolu_m", "echo", map[string]any{"text": "1"}), 1000, 40),
				agentlooptest.Text("SHOULD NOT BE REACHED"),
			},
			opts:      agentloop.Options{MaxTurns: 1},
			wantSeq:   []string{"system/init", "assistant:tool_use", "user:tool_result", "result:error_max_turns"},
			wantTurns: 2, wantSub: "error_max_turns", wantErr: true, wantUsage: [2]int64{1000, 40}, wantCost: opus(1000, 40), wantReqs: 1,
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if diff := cmp.Diff([]string{"Reached maximum number of turns (1)"}, res.Errors); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				if res.StopReason == nil || *res.StopReason != "tool_use" || res.TerminalReason != "max_turns" {
					t.Errorf("stop_reason %v terminal %q", res.StopReason, res.TerminalReason)
				}
			},
		},
		{
			name: "budget",
			replies: []agentlooptest.Reply{
				withUsage(agentlooptest.Blocks(model.TextBlock("Reading."), agentlooptest.ToolUseBlock("toolu_b", "touch", map[string]any{"text": "1"})), 500000, 100),
				agentlooptest.Text("SHOULD NOT BE REACHED"),
			},
			opts:      agentloop.Options{MaxBudgetUSD: 0.01, PermissionMode: agentloop.PermissionBypass},
			wantSeq:   []string{"system/init", "assistant:text", "assistant:tool_use", "result:error_max_budget_usd"},
			wantTurns: 1, wantSub: "error_max_budget_usd", wantErr: true, wantUsage: [2]int64{0, 0}, wantCost: opus(500000, 100), wantReqs: 1,
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if diff := cmp.Diff([]string{"Reached maximum budget ($0.01)"}, res.Errors); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				if res.StopReason != nil {
					t.Errorf("stop_reason = %q, want null", *res.StopReason)
				}
				if mu := res.ModelUsage["claude-opus-5-5"]; mu.InputTokens != 500000 || math.Abs(mu.CostUSD-opus(500000, 100)) > 1e-12 {
					t.Errorf("modelUsage = %+v", mu)
				}
			},
		},
		{
			name: "500 twice then success",
			replies: []agentlooptest.Reply{
				agentlooptest.ServerError(), agentlooptest.ServerError(), withUsage(agentlooptest.Text("Recovered."), 100, 20),
			},
			wantSeq:   []string{"system/init", "system/api_retry", "system/api_retry", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantUsage: [2]int64{100, 20}, wantCost: 0.0008, wantReqs: 3, wantText: "Recovered.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				for i, want := range []int{1, 2} {
					r := msgs[1+i].(*agentloop.SystemMessage).APIRetry
					if r.Attempt != want || r.ErrorStatus == nil || *r.ErrorStatus != 500 || r.MaxRetries != 10 || r.Error != "server_error" {
						t.Errorf("retry %d = %+v", i, r)
					}
				}
			},
		},
		{
			name:      "529 until the provider gives up",
			replies:   []agentlooptest.Reply{agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Text("never")},
			wantSeq:   []string{"system/init", "system/api_retry", "system/api_retry", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantErr: true, wantReqs: 3,
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if res.APIErrorStatus == nil || *res.APIErrorStatus != 529 || !strings.Contains(res.Text(), "529") {
					t.Errorf("result = %+v", res)
				}
				a := msgs[3].(*agentloop.AssistantMessage)
				if a.Message.Model != "<synthetic>" || !a.IsAPIErrorMessage || a.Error != "overloaded" {
					t.Errorf("synthetic message = %+v", a)
				}
			},
		},
		{
			name: "529 then the fallback model",
			replies: []agentlooptest.Reply{
				agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Overloaded(),
				withUsage(agentlooptest.Text("From sonnet."), 100, 10),
			},
			opts:      agentloop.Options{FallbackModels: []string{"sonnet"}},
			wantSeq:   []string{"system/init", "system/api_retry", "system/api_retry", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantUsage: [2]int64{100, 10}, wantCost: 100*2/1e6 + 10*10/1e6, wantReqs: 4, wantText: "From sonnet.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if m := srv.Requests()[3].Params.Model; m != "claude-sonnet-5-5" {
					t.Errorf("fallback request model = %q", m)
				}
				if _, ok := res.ModelUsage["claude-sonnet-5-5"]; !ok || len(res.ModelUsage) != 1 {
					t.Errorf("modelUsage = %v", res.ModelUsage)
				}
			},
		},
		{
			name:      "401 gives up on the second",
			replies:   repeat(agentlooptest.Error(401, "authentication_error", "invalid x-api-key"), 2),
			wantSeq:   []string{"system/init", "system/api_retry", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantErr: true, wantReqs: 2,
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if res.APIErrorStatus == nil || *res.APIErrorStatus != 401 || res.TerminalReason != "api_error" {
					t.Errorf("result = %+v", res)
				}
				if !strings.Contains(res.Text(), "invalid x-api-key") {
					t.Errorf("result text %q does not carry the API's message", res.Text())
				}
			},
		},
		{
			name: "mid-stream error",
			replies: []agentlooptest.Reply{
				withUsage(agentlooptest.ErrorEvent("overloaded_error", "Overloaded"), 50, 0),
				withUsage(agentlooptest.Text("Second try."), 100, 20),
			},
			wantSeq:   []string{"system/init", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantUsage: [2]int64{150, 20}, wantCost: 0.0008, wantReqs: 2, wantText: "Second try.",
		},
		{
			name: "max_tokens continuation",
			replies: []agentlooptest.Reply{
				func() agentlooptest.Reply {
					r := agentlooptest.Text("Part one")
					r.StopReason = "max_tokens"
					return r
				}(),
				agentlooptest.Text(" and part two."),
			},
			wantSeq:   []string{"system/init", "assistant:text", "user:synthetic", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: " and part two.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				h := srv.Requests()[1].Params.Messages
				if len(h) != 3 || h[1].Role != "assistant" || h[2].Role != "user" || h[2].Content[0].Type != "text" {
					t.Errorf("continuation history = %+v", h)
				}
			},
		},
		{
			name: "refusal",
			replies: []agentlooptest.Reply{func() agentlooptest.Reply {
				r := agentlooptest.Text("I can't help with that.")
				r.StopReason = "refusal"
				return r
			}()},
			wantSeq:   []string{"system/init", "assistant:text", "result:success"},
			wantTurns: 1, wantSub: "success", wantUsage: [2]int64{10, 5}, wantCost: opus(10, 5), wantReqs: 1, wantText: "I can't help with that.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if res.StopReason == nil || *res.StopReason != "refusal" {
					t.Errorf("stop_reason = %v, want refusal", res.StopReason)
				}
			},
		},
		{
			name: "write denied in default mode",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_t", "touch", map[string]any{"text": "x"}),
				agentlooptest.Text("Denied."),
			},
			wantSeq:   []string{"system/init", "assistant:tool_use", "system/permission_denied", "user:tool_result", "assistant:text", "result:success"},
			wantTurns: 2, wantSub: "success", wantUsage: [2]int64{20, 10}, wantCost: 2 * opus(10, 5), wantReqs: 2, wantText: "Denied.",
			check: func(t *testing.T, srv *agentlooptest.Server, msgs []agentloop.Message, res *agentloop.ResultMessage) {
				if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "touch" {
					t.Errorf("permission_denials = %+v", res.PermissionDenials)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var touched atomic.Int32
			srv := agentlooptest.NewTB(t, tc.replies...)
			opts := tc.opts
			opts.Provider = provider(t, srv, nil)
			opts.Cwd = t.TempDir()
			opts.Tools = []string{}
			opts.CustomTools = testTools(&touched)
			var msgs []agentloop.Message
			var resErr error
			for m, err := range agentloop.Query(context.Background(), "do it", &opts) {
				if err != nil {
					resErr = err
					break
				}
				msgs = append(msgs, m)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, label(m))
			}
			if diff := cmp.Diff(tc.wantSeq, got); diff != "" {
				t.Fatalf("message sequence (-want +got):\n%s", diff)
			}
			res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			var re *agentloop.ResultError
			if tc.wantErr != errors.As(resErr, &re) || (tc.wantErr && re.Result != res) {
				t.Errorf("error after the result = %v, want a ResultError: %v", resErr, tc.wantErr)
			}
			if !tc.wantErr && resErr != nil {
				t.Errorf("unexpected error %v", resErr)
			}
			if res.NumTurns != tc.wantTurns || res.Subtype != tc.wantSub {
				t.Errorf("num_turns %d subtype %s, want %d %s", res.NumTurns, res.Subtype, tc.wantTurns, tc.wantSub)
			}
			if u := res.Usage; u.InputTokens != tc.wantUsage[0] || u.OutputTokens != tc.wantUsage[1] {
				t.Errorf("usage in/out = %d/%d, want %d/%d", u.InputTokens, u.OutputTokens, tc.wantUsage[0], tc.wantUsage[1])
			}
			if math.Abs(res.TotalCostUSD-tc.wantCost) > 1e-12 {
				t.Errorf("total_cost_usd = %v, want %v", res.TotalCostUSD, tc.wantCost)
			}
			if n := srv.Len(); n != tc.wantReqs {
				t.Errorf("requests = %d, want %d", n, tc.wantReqs)
			}
			if tc.wantText != "" && res.Text() != tc.wantText {
				t.Errorf("result = %q, want %q", res.Text(), tc.wantText)
			}
			if !tc.wantErr && touched.Load() != 0 && tc.opts.PermissionMode != agentloop.PermissionBypass {
				t.Errorf("the denied tool ran")
			}
			// Every line is valid stream-json that decodes back.
			for _, m := range msgs {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatalf("marshal %s: %v", label(m), err)
				}
				back, err := agentloop.DecodeMessage(b)
				if err != nil || label(back) != label(m) {
					t.Errorf("round trip of %s: %v, %v", b, label(back), err)
				}
			}
			if tc.check != nil {
				tc.check(t, srv, msgs, res)
			}
		})
	}
}

func repeat(r agentlooptest.Reply, n int) []agentlooptest.Reply {
	out := make([]agentlooptest.Reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func repeatS(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

var _ = fmt.Sprint
