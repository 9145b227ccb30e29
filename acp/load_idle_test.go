package acp_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// TestLoadSessionHeldByIdleClient: session/load of a session that another
// live client holds but is not running (an editor window left open, the
// adapter's engine waiting for input) replays it and continues it; the
// holder's own next prompt runs afterwards.
func TestLoadSessionHeldByIdleClient(t *testing.T) {
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("First answer."), agentlooptest.Text("From the editor."),
		agentlooptest.Text("Holder again."))
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := agentloop.NewClient(&agentloop.Options{Provider: p, ConfigDir: cfg, Cwd: cwd, Tools: []string{},
		SettingSources: []settings.SettingSource{}})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx := context.Background()
	if _, err := holder.Query(ctx, "HELLO-FROM-HOLDER").Result(); err != nil {
		t.Fatal(err)
	}
	id := sdk.SessionId(holder.SessionID())

	r := start(t, srv, cfg, cwd)
	if _, err := r.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("loading the idle holder's session: %v", err)
	}
	if d := cmp.Diff([]string{"user: HELLO-FROM-HOLDER", "text: First answer."}, summary(r.ed.take())); d != "" {
		t.Errorf("replay (-want +got):\n%s", d)
	}
	if _, err := r.prompt(ctx, id, "FROM-THE-EDITOR"); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.LastRequest().Params.Messages); n != 3 {
		t.Errorf("the loaded session sent %d messages, want 3", n)
	}
	if _, err := holder.Query(ctx, "HOLDER-AGAIN").Result(); err != nil {
		t.Errorf("the holder's next prompt: %v", err)
	}
}
