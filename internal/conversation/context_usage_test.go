package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// TestContextUsageAfterQuery: after one query, the categories in use add
// up to the total (the last reply's usage), the window is the model's from
// the pricing table, the split comes from the count_tokens endpoint, and
// free space fills the window.
func TestContextUsageAfterQuery(t *testing.T) {
	reply := agentlooptest.Text("hello")
	reply.Usage = model.Usage{InputTokens: 9_000, CacheReadInputTokens: 30_000, OutputTokens: 1_000}
	srv := agentlooptest.NewTB(t, reply)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "CLAUDE.md"), []byte(strings.Repeat("Always answer in haiku.\n", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		ConfigDir: t.TempDir(), Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, err := range c.Query(context.Background(), "hi") {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, err := c.ContextUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	counts := 0
	for _, r := range srv.AllRequests() {
		if r.Kind == agentlooptest.KindCountTokens {
			counts++
		}
	}
	if counts < 3 || u.Measured != "count_tokens" {
		t.Errorf("count_tokens requests = %d, measured %q; want at least 3 and count_tokens", counts, u.Measured)
	}
	if u.MaxTokens != 1_000_000 || u.Model != "claude-sonnet-5-5" || u.AutoCompactThreshold != 1_000_000-20_000-13_000 {
		t.Errorf("window %d, model %s, threshold %d; want 1000000, claude-sonnet-5-5, 967000", u.MaxTokens, u.Model, u.AutoCompactThreshold)
	}
	if !u.FromAPIUsage || u.TotalTokens != 40_000 {
		t.Errorf("total = %d (from API usage %v), want 40000 from the reply's usage", u.TotalTokens, u.FromAPIUsage)
	}
	var used, all int64
	byID := map[string]int64{}
	for _, cat := range u.Categories {
		all += cat.Tokens
		byID[cat.ID] = cat.Tokens
		if cat.Kind == "used" {
			used += cat.Tokens
		}
	}
	if used != u.TotalTokens || all != u.MaxTokens {
		t.Errorf("used categories add up to %d (want %d), all to %d (want %d): %+v", used, u.TotalTokens, all, u.MaxTokens, u.Categories)
	}
	for _, id := range []string{agentloop.ContextSystemPrompt, agentloop.ContextSystemTools, agentloop.ContextMemoryFiles, agentloop.ContextMessages} {
		if byID[id] <= 0 {
			t.Errorf("category %s = %d, want > 0", id, byID[id])
		}
	}
	if want := float64(u.TotalTokens) * 100 / 1_000_000; u.Percentage != want {
		t.Errorf("percentage = %v, want %v", u.Percentage, want)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ContextUsage(context.Background()); !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

// TestContextManagementOption: the option is sent as context_management
// with its beta, and nothing is sent without it; a bad edit is refused.
func TestContextManagementOption(t *testing.T) {
	cm := &agentloop.ContextManagement{Edits: []agentloop.ContextEdit{
		{Type: agentloop.EditClearToolUses, Trigger: &agentloop.ContextAmount{Type: "input_tokens", Value: 100_000},
			Keep: &agentloop.ContextAmount{Type: "tool_uses", Value: 3}, ExcludeTools: []string{"Read"}, ClearAllToolInputs: true},
		{Type: agentloop.EditClearThinking, Keep: &agentloop.ContextAmount{Type: "all"}},
	}}
	for _, tt := range []struct {
		name string
		cm   *agentloop.ContextManagement
		want string
	}{
		{"off", nil, ""},
		{"on", cm, `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},` +
			`"keep":{"type":"tool_uses","value":3},"exclude_tools":["Read"],"clear_tool_inputs":true},` +
			`{"type":"clear_thinking_20251015","keep":"all"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			runQuery(t, &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
				ContextManagement: tt.cm})
			req := srv.Requests()[0]
			got := req.Field("context_management")
			if tt.want == "" {
				if got != nil || slices.Contains(req.Params.Betas, model.ContextManagementBeta) {
					t.Errorf("context_management = %s, betas %v; want neither", got, req.Params.Betas)
				}
				return
			}
			var a, b any
			if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(tt.want), &b) != nil || !jsonEqual(a, b) {
				t.Errorf("context_management = %s\nwant %s", got, tt.want)
			}
			if !slices.Contains(req.Params.Betas, model.ContextManagementBeta) {
				t.Errorf("betas %v lack %s", req.Params.Betas, model.ContextManagementBeta)
			}
		})
	}
	for _, bad := range []agentloop.ContextEdit{
		{Type: "clear_everything"},
		{Type: agentloop.EditClearThinking, Trigger: &agentloop.ContextAmount{Type: "input_tokens", Value: 1}},
		{Type: agentloop.EditClearToolUses, Keep: &agentloop.ContextAmount{Type: "tool_uses"}},
	} {
		_, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, agentlooptest.NewTB(t), nil), Cwd: t.TempDir(),
			NoSessionPersistence: true, ContextManagement: &agentloop.ContextManagement{Edits: []agentloop.ContextEdit{bad}}})
		if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), "Edits[0]") {
			t.Errorf("edit %+v: err = %v, want ErrInvalidOption naming Edits[0]", bad, err)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
