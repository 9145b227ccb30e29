package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session/postgres"
)

// pgPool connects to the test PostgreSQL ($AGENTLOOP_TEST_POSTGRES, else
// the CI's 127.0.0.1:5432 database test), skipping when it is unreachable
// unless $CI is set.
func pgPool(t testing.TB) *postgres.Pool {
	t.Helper()
	conn := pgConnString()
	pool := testdb.OpenPostgres(t, conn, postgres.NewPool)
	return pool
}

func pgConnString() string { return testdb.PostgresURL() }

// pgTable returns a fresh table name, dropped at the end of the test.
func pgTable(t testing.TB, pool *postgres.Pool) string {
	name := "agentloop_serve_test_" + testdb.Suffix()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool.Exec(ctx, `DROP TABLE IF EXISTS "`+name+`"`)
	})
	return name
}

// Two replicas sharing a PostgreSQL store: while A runs a turn of a
// session, B refuses messages for it with 409 naming A (control calls go
// to A: control_test.go),
// and B's event stream follows A's events from the store; once A went
// idle and released the lease, B takes the session over with A's history,
// and its event ids continue A's.
func TestReplicasShareSessions(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	store, err := postgres.NewWithPool(ctx, pool, &postgres.Options{Table: pgTable(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	m := agentlooptest.NewTB(t,
		agentlooptest.Reply{Content: agentlooptest.Text("Noted: KIWI.").Content, Delay: 1500 * time.Millisecond},
		agentlooptest.Text("You said KIWI."))
	root, dataA, dataB := t.TempDir(), t.TempDir(), t.TempDir()
	a := newEnvWith(t, m, store, func(c *serve.Config) {
		c.ReplicaID, c.Root, c.DataDir, c.IdleRelease, c.PollInterval = "replica-A", root, dataA, 200*time.Millisecond, 20*time.Millisecond
	})
	b := newEnvWith(t, m, store, func(c *serve.Config) {
		c.ReplicaID, c.Root, c.DataDir, c.IdleRelease, c.PollInterval = "replica-B", root, dataB, 200*time.Millisecond, 20*time.Millisecond
	})

	id := a.create(tokenA, map[string]any{"title": "shared"})
	if rec := b.must(http.StatusOK, "GET", "/v1/sessions/"+id, tokenA, nil); rec["title"] != "shared" {
		t.Errorf("B sees %v", rec)
	}
	bStream := b.subscribe(id, tokenA, "")
	a.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "Remember KIWI"})
	bStream.until(func(ev sseEvent) bool { return ev.Kind == "state" && strings.Contains(ev.Data, "running") })

	code, body := b.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "too early"})
	var conflict struct {
		Error struct{ Type, Message, Holder string }
	}
	json.Unmarshal(body, &conflict)
	if code != http.StatusConflict || conflict.Error.Type != "conflict" || conflict.Error.Holder != "replica-A" {
		t.Errorf("B's message while A runs: %d %s, want 409 with holder replica-A", code, body)
	}
	fromA := bStream.until(isResult) // followed through the store
	if !strings.Contains(fromA[len(fromA)-1].Data, "Noted: KIWI.") {
		t.Errorf("B's stream of A's turn ended with %s", fromA[len(fromA)-1].Data)
	}
	lastA := fromA[len(fromA)-1].ID

	// A releases the session once idle; then B takes it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body = b.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "What did I say?"})
		if code == http.StatusAccepted {
			break
		}
		if code != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("B's message after A's turn: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fromB := bStream.until(isResult)
	if !strings.Contains(fromB[len(fromB)-1].Data, "You said KIWI.") {
		t.Errorf("B's turn ended with %s", fromB[len(fromB)-1].Data)
	}
	if h := m.Requests()[1].Params.Messages; len(h) != 3 || h[1].Content[0].Text != "Noted: KIWI." {
		t.Errorf("history of B's turn = %+v, want A's exchange first", h)
	}
	var ids []string
	for _, ev := range append(fromA, fromB...) {
		ids = append(ids, ev.ID)
	}
	seen := map[string]bool{}
	for _, x := range ids {
		if seen[x] {
			t.Errorf("event id %s twice in %v", x, ids)
		}
		seen[x] = true
	}
	if len(fromB) > 0 && fromB[0].ID <= lastA && len(fromB[0].ID) <= len(lastA) {
		t.Errorf("B's event ids %v do not continue A's (last %s)", ids, lastA)
	}
	rec := a.waitState(id, tokenA, "idle")
	if rec["turns"] != 2.0 {
		t.Errorf("record after two turns on two replicas: %v", rec)
	}
}
