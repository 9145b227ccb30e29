package serve_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// A stream of a session held by another replica follows it by the store's
// notices, not by polling: with a poll interval of an hour, replica B's
// stream still gets every event of A's turn, in order, up to the result.
// (Through a store that is not a session.Watcher it gets none of them in
// time: the mutation check of storeWithoutWatch.)
func TestStreamFollowsByNotice(t *testing.T) {
	for _, c := range []struct {
		name  string
		store session.Store
		want  bool
	}{
		{"watcher", session.NewMemoryStore(), true},
		{"no watcher", storeWithoutWatch{session.NewMemoryStore()}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := agentlooptest.NewTB(t, agentlooptest.Text("Hello from A."))
			root := t.TempDir()
			replica := func(name string) func(*serve.Config) {
				return func(cfg *serve.Config) { cfg.Root, cfg.ReplicaID, cfg.PollInterval = root, name, time.Hour }
			}
			a := newEnvWith(t, m, c.store, replica("A"))
			b := newEnvWith(t, m, c.store, replica("B"))
			id := a.create(tokenA, map[string]any{})
			evB := b.subscribe(id, tokenA, "")
			a.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "hi"})
			got := make(chan bool, 1)
			go func() {
				for {
					select {
					case ev, ok := <-evB.events:
						if !ok {
							got <- false
							return
						}
						if isResult(ev) {
							got <- true
							return
						}
					case <-time.After(5 * time.Second):
						got <- false
						return
					}
				}
			}()
			if ok := <-got; ok != c.want {
				t.Errorf("B's stream saw the result: %v, want %v", ok, c.want)
			}
		})
	}
}

// storeWithoutWatch hides a store's Watcher methods.
type storeWithoutWatch struct{ session.Store }
