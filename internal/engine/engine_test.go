package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// scripted is a provider without HTTP: it answers from a list and records
// requests, for testing the loop's steps alone.
type scripted struct {
	replies []*model.Response
	reqs    []*model.Request
}

func (s *scripted) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	b, _ := json.Marshal(req)
	var cp model.Request
	_ = json.Unmarshal(b, &cp)
	s.reqs = append(s.reqs, &cp)
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

func newSession(t *testing.T, p model.Provider, tools ...tool.Tool) *Session {
	t.Helper()
	s, err := New(Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
		System: []model.Content{model.TextBlock("sys one"), model.TextBlock("sys two")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuildRequest(t *testing.T) {
	echo := tool.New("echo", "Echo.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}, c *tool.Call) (tool.Result, error) {
		return tool.Text(in.Text), nil
	}, &tool.Options{ReadOnly: true})
	s := newSession(t, &scripted{}, echo)
	s.history = []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("hi")}},
		{Role: "assistant", Content: []model.Content{{Type: model.TypeToolUse, ID: "t1", Name: "echo", Input: json.RawMessage(`{"text":"x"}`)}}},
		{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "t1", Text: "x"}}},
	}
	req := s.buildRequest("claude-opus-5-5")
	var breakpoints []string
	for i, b := range req.System {
		if b.CacheControl != nil {
			breakpoints = append(breakpoints, "system["+string(rune('0'+i))+"]")
		}
	}
	for i, m := range req.Messages {
		for j, b := range m.Content {
			if b.CacheControl != nil {
				breakpoints = append(breakpoints, "messages["+string(rune('0'+i))+"]["+string(rune('0'+j))+"]")
			}
		}
	}
	if diff := cmp.Diff([]string{"system[1]", "messages[2][0]"}, breakpoints); diff != "" {
		t.Errorf("cache breakpoints (-want +got):\n%s", diff)
	}
	for _, m := range s.history {
		for _, b := range m.Content {
			if b.CacheControl != nil {
				t.Fatal("buildRequest marked the session history itself")
			}
		}
	}
	if req.MaxTokens != 128000 || !req.Stream || req.Model != "claude-opus-5-5" {
		t.Errorf("request = %+v", req)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "echo" || req.Tools[0].Description != "Echo." {
		t.Errorf("tools = %+v", req.Tools)
	}
	var meta map[string]string
	if err := json.Unmarshal([]byte(req.Metadata.UserID), &meta); err != nil || meta["session_id"] != "s1" {
		t.Errorf("metadata.user_id = %q", req.Metadata.UserID)
	}
}

// TestSystemBlocksShared: the requests of a session share one slice of
// system blocks rather than each copying the configured ones; the last
// carries the breakpoint, the configured blocks themselves stay unmarked.
func TestSystemBlocksShared(t *testing.T) {
	s := newSession(t, &scripted{})
	s.cfg.System = []model.Content{model.TextBlock("one"), model.TextBlock("two")}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("hi")}}}
	first, second := s.buildRequest("claude-opus-5-5"), s.buildRequest("claude-opus-5-5")
	want := []model.Content{model.TextBlock("one"), model.TextBlock("two")}
	want[1].CacheControl = ephemeral
	if d := cmp.Diff(want, first.System); d != "" {
		t.Fatalf("system (-want +got):\n%s", d)
	}
	if &first.System[0] != &second.System[0] {
		t.Error("each request copied the system blocks")
	}
	if s.cfg.System[1].CacheControl != nil {
		t.Error("the configured system blocks were marked")
	}
	other := newSession(t, &scripted{})
	other.cfg.System = s.cfg.System // sessions made from the same options share it
	other.history = s.history
	if o := other.buildRequest("claude-opus-5-5"); &o.System[0] != &first.System[0] {
		t.Error("a session with the same system blocks copied them")
	}
	s.cfg.System = []model.Content{model.TextBlock("three")}
	third := s.buildRequest("claude-opus-5-5")
	if len(third.System) != 1 || third.System[0].Text != "three" || third.System[0].CacheControl == nil {
		t.Errorf("after a change, system = %+v", third.System)
	}
	if d := cmp.Diff(want, other.buildRequest("claude-opus-5-5").System); d != "" {
		t.Errorf("the other session's system after the first changed (-want +got):\n%s", d)
	}
}

// varInfo is a tool whose description the test changes between requests
// (between runs, as tool.Tool allows).
type varInfo struct{ desc *string }

func (v varInfo) Info() tool.Info {
	return tool.Info{Name: "var", Description: *v.desc, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (varInfo) Run(context.Context, *tool.Call) (tool.Result, error) { return tool.Text("ok"), nil }

// TestToolDefsShared: the requests of a session share one slice of tool
// definitions while they stay the same, and get a new one when a tool's
// definition changes; ContextRequest's copy is the caller's to change.
func TestToolDefsShared(t *testing.T) {
	desc := "first"
	echo := tool.New("echo", "Echo.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}, c *tool.Call) (tool.Result, error) {
		return tool.Text(in.Text), nil
	}, &tool.Options{ReadOnly: true})
	s := newSession(t, &scripted{}, echo, varInfo{&desc})
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("hi")}}}
	names := func(defs []model.ToolDef) (out []string) {
		for _, d := range defs {
			out = append(out, d.Name+": "+d.Description)
		}
		return out
	}
	first, second := s.buildRequest("claude-opus-5-5"), s.buildRequest("claude-opus-5-5")
	if d := cmp.Diff([]string{"echo: Echo.", "var: first"}, names(first.Tools)); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}
	if &first.Tools[0] != &second.Tools[0] {
		t.Error("each request copied the tool definitions")
	}
	desc = "second"
	third := s.buildRequest("claude-opus-5-5")
	if d := cmp.Diff([]string{"echo: Echo.", "var: second"}, names(third.Tools)); d != "" {
		t.Errorf("after a change (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"echo: Echo.", "var: first"}, names(first.Tools)); d != "" {
		t.Errorf("the change reached an earlier request (-want +got):\n%s", d)
	}
	other := newSession(t, &scripted{}, echo, varInfo{&desc})
	other.history = s.history
	if o := other.buildRequest("claude-opus-5-5"); &o.Tools[0] != &third.Tools[0] {
		t.Error("a session with the same tool definitions copied them")
	}
	own := s.ContextRequest()
	own.Tools[0].Name = "changed"
	own.System[0].Text = "changed"
	if next := s.buildRequest("claude-opus-5-5"); next.Tools[0].Name != "echo" || next.System[0].Text != "sys one" {
		t.Errorf("a change to ContextRequest's request reached the next one: %q, %q", next.Tools[0].Name, next.System[0].Text)
	}
}

// TestHistoryReplay checks the invariant that nothing the model was told is
// lost: after a tool turn, the next request carries the assistant turn with
// every block and one user message pairing each tool_use with its result.
func TestHistoryReplay(t *testing.T) {
	p := &scripted{replies: []*model.Response{
		{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			{Type: model.TypeThinking, Thinking: "think", Signature: "sig"},
			{Type: model.TypeToolUse, ID: "a", Name: "nope", Input: json.RawMessage(`{}`)},
			{Type: model.TypeToolUse, ID: "b", Name: "nope2", Input: json.RawMessage(`{}`)},
		}},
		{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}},
	}}
	s := newSession(t, p)
	var msgs []message.Message
	res, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(m message.Message) bool {
		msgs = append(msgs, m)
		return true
	})
	if err != nil || res.Subtype != "success" || res.NumTurns != 3 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	h := p.reqs[1].Messages
	if len(h) != 3 {
		t.Fatalf("history has %d messages", len(h))
	}
	if th := h[1].Content[0]; th.Thinking != "think" || th.Signature != "sig" {
		t.Errorf("thinking block not kept verbatim: %+v", th)
	}
	var ids []string
	for _, b := range h[2].Content {
		ids = append(ids, b.ToolUseID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	if got := s.History(); len(got) != 4 || got[3].Role != "assistant" {
		t.Errorf("final history = %+v", got)
	}
}

func TestNewRejectsBadTools(t *testing.T) {
	dup := tool.New("x", "", func(context.Context, struct{}, *tool.Call) (tool.Result, error) { return tool.Result{}, nil }, nil)
	for name, cfg := range map[string]Config{
		"no provider": {Model: "m", Env: &tool.Env{}},
		"no env":      {Provider: &scripted{}, Model: "m"},
		"duplicate":   {Provider: &scripted{}, Model: "m", Env: &tool.Env{}, Tools: []tool.Tool{dup, dup}},
		"nil tool":    {Provider: &scripted{}, Model: "m", Env: &tool.Env{}, Tools: []tool.Tool{nil}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}
