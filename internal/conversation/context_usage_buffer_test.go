package conversation_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestContextUsageAutocompactBuffer: with automatic compaction on, the
// window above the threshold is an autocompact_buffer category of kind
// reserved, taken out of the free space; with it off there is no such
// category. The messages breakdown is there either way.
func TestContextUsageAutocompactBuffer(t *testing.T) {
	cwd, configDir := compactSetup(t)
	for _, disable := range []bool{false, true} {
		srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "big", map[string]any{"n": 1}), agentlooptest.Text("done"))
		opts := compactOptions(t, srv, cwd, configDir, 50_000)
		opts.DisableAutoCompact = disable
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range c.Query(context.Background(), "hi") {
			if err != nil {
				t.Fatal(err)
			}
		}
		u, err := c.ContextUsage(context.Background())
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]string{}
		tokens := map[string]int64{}
		var all int64
		for _, cat := range u.Categories {
			kinds[cat.ID], tokens[cat.ID] = cat.Kind, cat.Tokens
			all += cat.Tokens
		}
		if all != u.MaxTokens {
			t.Errorf("disabled %v: categories add up to %d, want the window %d", disable, all, u.MaxTokens)
		}
		want := map[string]string{agentloop.ContextSystemPrompt: "used", agentloop.ContextSystemTools: "used",
			agentloop.ContextMemoryFiles: "used", agentloop.ContextMessages: "used", agentloop.ContextFreeSpace: "free"}
		if !disable {
			want[agentloop.ContextAutocompactBuffer] = "reserved"
			if got := tokens[agentloop.ContextAutocompactBuffer]; got != u.MaxTokens-u.AutoCompactThreshold {
				t.Errorf("autocompact buffer %d tokens, want window − threshold = %d", got, u.MaxTokens-u.AutoCompactThreshold)
			}
		}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("disabled %v: category kinds (-want +got):\n%s", disable, diff)
		}
		b := u.MessageBreakdown
		if b == nil {
			t.Fatal("no message breakdown")
		}
		if len(b.ToolCallsByType) != 1 || b.ToolCallsByType[0].Name != "big" || b.ToolCallsByType[0].CallTokens <= 0 ||
			b.ToolCallsByType[0].ResultTokens < 1000 || b.ToolResultTokens != b.ToolCallsByType[0].ResultTokens ||
			b.UserMessageTokens <= 0 || b.AssistantMessageTokens <= 0 {
			t.Errorf("breakdown %+v", b)
		}
	}
}
