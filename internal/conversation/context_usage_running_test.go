package conversation_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// TestContextUsageDuringTurn: while a turn of Messages runs (a tool is
// working), ContextUsage measures the request of the turn's latest model
// call instead of refusing.
func TestContextUsageDuringTurn(t *testing.T) {
	first := agentlooptest.ToolUse("toolu_1", "gate", map[string]any{"text": "x"})
	first.Usage = model.Usage{InputTokens: 12_000, OutputTokens: 40}
	srv := agentlooptest.NewTB(t, first, agentlooptest.Text("done"))
	g := newGate()
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
		ConfigDir: t.TempDir(), Tools: []string{}, CustomTools: []agentloop.Tool{g.tool()},
		PermissionMode: agentloop.PermissionBypass})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan *agentloop.ResultMessage, 1)
	go func() {
		for m, err := range c.Messages(ctx) {
			if err != nil {
				return
			}
			if r, ok := m.(*agentloop.ResultMessage); ok {
				results <- r
			}
		}
	}()
	if _, err := c.Send(agentloop.UserInput{Text: "open the gate"}); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	u, err := c.ContextUsage(ctx)
	if err != nil {
		t.Fatalf("ContextUsage during a turn: %v", err)
	}
	if !u.FromAPIUsage || u.TotalTokens < 12_000 {
		t.Errorf("total %d (from API usage %v), want at least the first reply's 12040", u.TotalTokens, u.FromAPIUsage)
	}
	g.open()
	if r := <-results; r.IsError {
		t.Fatalf("the turn ended in %s", r.Subtype)
	}

}
