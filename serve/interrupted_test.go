package serve_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// A replica that dies in the middle of a turn (it renews and writes
// nothing more) leaves the session marked interrupted once its lease runs
// out: a client following the session on another replica gets the state
// as an event, GET says so, and the next message runs there.
func TestDeadHolderInterrupted(t *testing.T) {
	m := agentlooptest.NewTB(t,
		agentlooptest.Reply{Content: agentlooptest.Text("never seen").Content, Delay: time.Minute},
		agentlooptest.Text("after"))
	m.AllowInvalidHistory()
	store := session.NewMemoryStore()
	root := t.TempDir()
	replica := func(name string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Root, c.ReplicaID, c.LeaseTTL, c.PollInterval = root, name, time.Second, 100*time.Millisecond
		}
	}
	a := newEnvWith(t, m, store, replica("A"))
	b := newEnvWith(t, m, store, replica("B"))
	id := a.create(tokenA, map[string]any{})
	a.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "slow one"})
	deadline := time.Now().Add(10 * time.Second)
	for m.Len() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the turn never reached the model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.srv.Crash()
	ev := b.subscribe(id, tokenA, "")
	got := ev.until(func(e sseEvent) bool { return e.Kind == "state" && strings.Contains(e.Data, "interrupted") })
	if rec := b.must(http.StatusOK, "GET", "/v1/sessions/"+id, tokenA, nil); rec["state"] != "interrupted" {
		t.Errorf("GET after the holder died: state %v, want interrupted", rec["state"])
	}
	b.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "go on"})
	got = append(got, ev.until(isResult)...)
	var last int64
	for _, e := range got {
		n, err := strconv.ParseInt(e.ID, 10, 64)
		if err != nil || n != last+1 {
			t.Fatalf("event ids %v: want 1, 2, 3, … once each", got)
		}
		last = n
	}
}
