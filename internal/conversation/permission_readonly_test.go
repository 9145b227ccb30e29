package conversation_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// TestToolReadOnlyPermission pins what ToolOptions.ReadOnly documents: a
// read-only custom tool runs without CanUseTool being asked; one that is
// not is asked (default mode); an ask rule still asks about a read-only
// tool, and a deny rule still refuses it.
func TestToolReadOnlyPermission(t *testing.T) {
	for _, c := range []struct {
		name      string
		readOnly  bool
		settings  string
		wantAsked int32
		wantRan   bool
	}{
		{"read-only", true, "", 0, true},
		{"not read-only", false, "", 1, true},
		{"read-only, ask rule", true, `{"permissions": {"ask": ["peek"]}}`, 1, true},
		{"read-only, deny rule", true, `{"permissions": {"deny": ["peek"]}}`, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ran, asked atomic.Int32
			peek := agentloop.NewTool("peek", "Looks at nothing.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				ran.Add(1)
				return agentloop.TextResult("seen"), nil
			}, &agentloop.ToolOptions{ReadOnly: c.readOnly})
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "peek", map[string]any{"text": "x"}), agentlooptest.Text("done"))
			_, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
				Tools: []string{}, CustomTools: []agentloop.Tool{peek}, SettingSources: []settings.SettingSource{},
				Settings: c.settings, NoSessionPersistence: true,
				CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					asked.Add(1)
					return agentloop.Allow(), nil
				}}).Collect()
			if err != nil {
				t.Fatal(err)
			}
			if asked.Load() != c.wantAsked || (ran.Load() > 0) != c.wantRan {
				t.Errorf("asked %d, ran %v; want asked %d, ran %v", asked.Load(), ran.Load() > 0, c.wantAsked, c.wantRan)
			}
		})
	}
}
