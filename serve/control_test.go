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
				x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil) // on the holder
				ev.until(isResult)
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

// A holder that does not answer a forwarded call: while it still holds
// the session's lease the caller gets 504; when its lease runs out while
// the replica that got the call waits (it died), that replica carries the
// call out itself.
func TestControlSilentHolder(t *testing.T) {
	defer func(d time.Duration) { serve.ForwardTimeout = d }(serve.ForwardTimeout)
	serve.ForwardTimeout = 2 * time.Second
	for _, c := range []struct {
		name string
		ttl  time.Duration
		want int
	}{
		{"holding", time.Minute, http.StatusGatewayTimeout},
		{"dead", 600 * time.Millisecond, http.StatusAccepted},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := agentlooptest.NewTB(t, agentlooptest.Reply{Content: agentlooptest.Text("slow").Content, Delay: 30 * time.Second})
			store, root := session.NewMemoryStore(), t.TempDir()
			named := func(name string) func(*serve.Config) {
				return func(cfg *serve.Config) { cfg.Root, cfg.ReplicaID, cfg.LeaseTTL = root, name, c.ttl }
			}
			x := newEnvWith(t, m, store, named("replica-X"))
			y := newEnvWith(t, m, store, named("replica-Y"))
			id := x.create(tokenA, map[string]any{})
			x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "take your time"})
			for m.Len() < 1 {
				time.Sleep(10 * time.Millisecond)
			}
			x.srv.Crash() // renews nothing, answers nothing; its lease runs out (or not) while Y waits
			if code, body := y.do("POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil); code != c.want {
				t.Errorf("interrupt on Y: %d %s, want %d", code, body, c.want)
			}
		})
	}
}
