package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// POST …/mode changes a session's permission mode from any replica: sent
// to Y while X holds the session, it reaches X (a Write in the working
// directory then runs without asking, as acceptEdits says); a mode the
// operator did not allow is a 403, a mode that does not exist a 400.
func TestSetModeFromAnyReplica(t *testing.T) {
	m := agentlooptest.NewTB(t, agentlooptest.Text("ready"))
	store, root := session.NewMemoryStore(), t.TempDir()
	named := func(name string) func(*serve.Config) {
		return func(cfg *serve.Config) { cfg.Root, cfg.ReplicaID, cfg.IdleRelease = root, name, time.Hour }
	}
	x := newEnvWith(t, m, store, named("replica-X"))
	y := newEnvWith(t, m, store, named("replica-Y"))
	id := x.create(tokenA, map[string]any{"tools": []string{"Write"}, "permission_mode": "default"})
	tenants := mustReadDir(t, root)
	if len(tenants) != 1 {
		t.Fatalf("tenant roots %v", tenants)
	}
	out := filepath.Join(root, tenants[0].Name(), id, "out.txt")
	m.Push(agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": out, "content": "written"}),
		agentlooptest.Text("done"))
	ev := x.subscribe(id, tokenA, "")
	x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "get ready"})
	ev.until(isResult) // X holds the session now
	y.must(http.StatusForbidden, "POST", "/v1/sessions/"+id+"/mode", tokenA, map[string]string{"mode": "bypassPermissions"})
	y.must(http.StatusBadRequest, "POST", "/v1/sessions/"+id+"/mode", tokenA, map[string]string{"mode": "yolo"})
	y.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/mode", tokenA, map[string]string{"mode": "acceptEdits"})
	x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "write it"})
	for _, e := range ev.until(isResult) {
		if e.Kind == "permission_request" {
			t.Errorf("the Write was asked after the mode changed to acceptEdits: %s", e.Data)
		}
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "written" {
		t.Errorf("the Write did not run: %q %v", b, err)
	}
}
