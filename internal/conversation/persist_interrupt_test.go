package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// A run cancelled by its caller (an interrupt) still waits for the
// session store to catch up before its result: no mirror_error claims
// entries were lost, and the store holds the run's lines.
func TestCancelledRunSettlesStore(t *testing.T) {
	store := session.NewMemoryStore()
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "stop", map[string]any{}), agentlooptest.Text("never sent"))
	srv.AllowExhausted()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := agentloop.NewTool("stop", "Stops the run.", func(ctx context.Context, _ struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		cancel()
		return agentloop.TextResult("stopping"), nil
	}, nil)
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{},
		CustomTools: []agentloop.Tool{stop}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, SessionStore: store}
	var id string
	var result bool
	for m := range agentloop.Query(ctx, "Stop when told", opts) {
		switch v := m.(type) {
		case *agentloop.SystemMessage:
			if v.Subtype == "mirror_error" {
				t.Errorf("a cancelled run reported lost store copies: %s", v.Data["error"])
			}
			if v.Subtype == "init" {
				id = v.SessionID
			}
		case *agentloop.ResultMessage:
			result = true
		}
	}
	if !result || id == "" {
		t.Fatalf("no result (%v) or no session id (%q)", result, id)
	}
	entries, err := store.Load(context.Background(), session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, e := range entries {
		b, _ := json.Marshal(e)
		text.Write(b)
	}
	if !strings.Contains(text.String(), "Stop when told") || !strings.Contains(text.String(), "stopping") {
		t.Fatalf("the store lacks the run's prompt or tool result (%d entries)", len(entries))
	}
}
