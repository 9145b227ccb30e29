package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// sealProvider is scripted, saying through SendsSealed whether it takes
// sealed results, and keeping each request's messages as it was given
// (given) besides scripted's JSON copy.
type sealProvider struct {
	scripted
	seals bool
	given [][]model.Message
}

func (p *sealProvider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	p.given = append(p.given, req.Messages)
	return p.scripted.Stream(ctx, req, h)
}

func (p *sealProvider) SendsSealed() bool { return p.seals }

// bigText is a tool result larger than model.SealMin.
var bigText = strings.Repeat("12\tline of a file with a \"quote\" and a <tag>\n", 80)

// sealSession runs, against p, a session whose model calls a tool with a
// large result and one with a small result, then answers.
func sealSession(t *testing.T, p *sealProvider) *Session {
	t.Helper()
	mk := func(name, out string) tool.Tool {
		return tool.New(name, "Gives text.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
			return tool.Text(out), nil
		}, &tool.Options{ReadOnly: true})
	}
	p.replies = []*model.Response{
		{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			{Type: model.TypeToolUse, ID: "t1", Name: "big", Input: json.RawMessage(`{}`)}}},
		{ID: "m2", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			{Type: model.TypeToolUse, ID: "t2", Name: "small", Input: json.RawMessage(`{}`)}}},
		{ID: "m3", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}},
	}
	s := newSession(t, p, mk("big", bigText), mk("small", "tiny"))
	res, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true })
	if err != nil || res.Subtype != "success" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	return s
}

// sealedIDs lists the tool_use ids of the sealed results in msgs.
func sealedIDs(msgs []model.Message) []string {
	var ids []string
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Sealed() {
				ids = append(ids, c.ToolUseID)
			}
		}
	}
	return ids
}

// TestSealedHistory shows that a session whose provider takes sealed
// results keeps a large one sealed in its history and requests, while
// what leaves that path (History, ContextRequest, SentRequest, a provider
// that does not take them) has the text; and that the API gets the same
// JSON either way.
func TestSealedHistory(t *testing.T) {
	plainP := &sealProvider{}
	plain := sealSession(t, plainP)
	p := &sealProvider{seals: true}
	s := sealSession(t, p)

	if d := cmp.Diff([]string{"t1"}, sealedIDs(s.history)); d != "" {
		t.Errorf("sealed in the history (-want +got):\n%s", d)
	}
	if ids := sealedIDs(plain.history); ids != nil {
		t.Errorf("a provider without SendsSealed: %v sealed in the history", ids)
	}
	for i, msgs := range p.given[1:] {
		if d := cmp.Diff([]string{"t1"}, sealedIDs(msgs)); d != "" {
			t.Errorf("request %d: sealed (-want +got):\n%s", i+2, d)
		}
	}
	for i := range p.reqs {
		if d := cmp.Diff(plainP.reqs[i], p.reqs[i]); d != "" {
			t.Errorf("request %d: JSON differs from a session that seals nothing (-plain +sealed):\n%s", i+1, d)
		}
	}
	for name, msgs := range map[string][]model.Message{
		"History": s.History(), "ContextRequest": s.ContextRequest().Messages, "SentRequest": s.SentRequest().Messages,
	} {
		if model.HasSealed(msgs) {
			t.Errorf("%s has sealed blocks", name)
		}
	}
	if d := cmp.Diff(plain.History(), s.History()); d != "" {
		t.Errorf("History differs from a session that seals nothing (-plain +sealed):\n%s", d)
	}
	if !model.HasSealed(s.history) {
		t.Fatal("History unsealed the session's own history")
	}

	// The provider changed to one without SendsSealed: its requests have
	// the text.
	other := &sealProvider{}
	s.cfg.Provider = other
	if model.HasSealed(s.buildRequest("claude-opus-5-5").Messages) {
		t.Error("a request to a provider without SendsSealed has sealed blocks")
	}

	// A history given to the session is sealed as it goes in.
	s.cfg.Provider = p
	given := plain.History()
	s.SetHistory(given)
	if d := cmp.Diff([]string{"t1"}, sealedIDs(s.history)); d != "" {
		t.Errorf("SetHistory: sealed (-want +got):\n%s", d)
	}
	if model.HasSealed(given) {
		t.Error("SetHistory sealed the caller's messages")
	}
}

// TestSealedCompaction shows that a sealed history is compacted from its
// text: the summary request has the result's text, and the session goes
// on afterwards.
func TestSealedCompaction(t *testing.T) {
	p := &sealProvider{seals: true}
	s := sealSession(t, p)
	s.cfg.Compaction = &Compaction{}
	p.replies = []*model.Response{
		{ID: "c1", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("<summary>Read a big file.</summary>")}},
	}
	res, err := s.Run(context.Background(), []model.Content{model.TextBlock("/compact")}, func(message.Message) bool { return true })
	if err != nil || res.Subtype != "success" {
		t.Fatalf("/compact = %+v, %v", res, err)
	}
	summaryReq := p.given[len(p.given)-1]
	if model.HasSealed(summaryReq) {
		t.Error("the summary request has sealed blocks")
	}
	found := false
	for _, m := range summaryReq {
		for _, c := range m.Content {
			found = found || strings.Contains(c.Text, "line of a file") || strings.Contains(c.ResultText(), "line of a file")
		}
	}
	if !found {
		t.Error("the summary request lacks the large result's text")
	}
}

// TestSealedKeepsSearchResults shows that a ToolSearch result in text form
// (a provider without tool_reference blocks) stays text in a sealing
// session, however large: each request reads it for the tools it loaded,
// which stay declared.
func TestSealedKeepsSearchResults(t *testing.T) {
	deferred := tool.New("mcp__s__t", "A deferred tool. "+strings.Repeat("It does many things, each described here. ", 40),
		func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
			return tool.Text("t ran"), nil
		}, nil)
	search, cat, replies := searchScript(deferred)
	p := &sealProvider{seals: true}
	p.replies = replies
	s, err := New(Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
		Tools: []tool.Tool{search, deferred}, Deferred: cat})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	for i, r := range p.reqs[1:] {
		if d := cmp.Diff([]string{"ToolSearch", "mcp__s__t"}, declared(*r)); d != "" {
			t.Errorf("request %d tools (-want +got):\n%s", i+2, d)
		}
	}
	if d := cmp.Diff([]string{"ToolSearch", "mcp__s__t"}, declared(*s.ContextRequest())); d != "" {
		t.Errorf("next request's tools (-want +got):\n%s", d)
	}
	result := s.history[2].Content[0]
	if result.ToolUseID != "ts" || result.Sealed() || len(result.Text) < model.SealMin {
		t.Errorf("ToolSearch's result: sealed %v, %d bytes of text; want text of at least %d", result.Sealed(), len(result.Text), model.SealMin)
	}
}
