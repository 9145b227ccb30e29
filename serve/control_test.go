package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// Control calls work from any replica: an interrupt sent to Y stops the
// turn X runs, and a delete sent to Y closes the session on X and deletes
// it; through a store that cannot carry them (not a session.Watcher) they
// answer 409 naming the holder, as before. (Permission answers:
// TestPendingPermissionsSeenFromOtherReplica.)
func TestControlFromAnyReplica(t *testing.T) {
	for _, c := range []struct {
		name     string
		store    session.Store
		forwards bool
	}{
		{"watcher", session.NewMemoryStore(), true},
		{"no watcher", storeWithoutWatch{session.NewMemoryStore()}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := agentlooptest.NewTB(t,
				agentlooptest.Reply{Content: agentlooptest.Text("slow").Content, Delay: 30 * time.Second},
				agentlooptest.Text("second"))
			m.AllowInvalidHistory()
			root := t.TempDir()
			named := func(name string) func(*serve.Config) {
				return func(cfg *serve.Config) { cfg.Root, cfg.ReplicaID, cfg.IdleRelease = root, name, time.Hour }
			}
			x := newEnvWith(t, m, c.store, named("replica-X"))
			y := newEnvWith(t, m, c.store, named("replica-Y"))
			id := x.create(tokenA, map[string]any{})
			ev := x.subscribe(id, tokenA, "")
			x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "take your time"})
			ev.until(func(e sseEvent) bool { return e.Kind == "state" && strings.Contains(e.Data, "running") })
			for m.Len() < 1 {
				time.Sleep(10 * time.Millisecond)
			}
			start := time.Now()
			code, body := y.do("POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil)
			if !c.forwards {
				if code != http.StatusConflict || !strings.Contains(string(body), "replica-X") {
					t.Errorf("interrupt on Y: %d %s, want 409 naming replica-X", code, body)
				}
				if code, body := y.do("DELETE", "/v1/sessions/"+id, tokenA, nil); code != http.StatusConflict {
					t.Errorf("delete on Y: %d %s, want 409", code, body)
				}
				return
			}
			if code != http.StatusAccepted {
				t.Fatalf("interrupt on Y: %d %s, want 202", code, body)
			}
			res := ev.until(isResult)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the turn ended %v after the interrupt on Y", d)
			}
			if last := res[len(res)-1].Data; !strings.Contains(last, "error_during_execution") && !strings.Contains(last, "interrupt") {
				t.Errorf("the turn's result after the interrupt on Y: %s", last)
			}
			y.must(http.StatusNoContent, "DELETE", "/v1/sessions/"+id, tokenA, nil)
			x.must(http.StatusNotFound, "GET", "/v1/sessions/"+id, tokenA, nil)
		})
	}
}
