package serve_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// A tenant's concurrent sessions are bounded: a message that would open
// one more session than MaxConcurrent is refused with 429 limit, and is
// taken once a session was released.
func TestTenantConcurrencyLimit(t *testing.T) {
	e := newEnv(t, func(c *serve.Config) {
		tenants := serve.NewMemoryTenants()
		tenants.Add(tokenA, serve.Tenant{ID: "tenant-a", MaxConcurrent: 1})
		c.Tenants = tenants
		c.IdleRelease = time.Second
	}, agentlooptest.Text("one"), agentlooptest.Text("two"))
	first, second := e.create(tokenA, nil), e.create(tokenA, nil)
	s := e.subscribe(first, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+first+"/messages", tokenA, map[string]string{"text": "a"})
	s.until(isResult)
	code, body := e.do("POST", "/v1/sessions/"+second+"/messages", tokenA, map[string]string{"text": "b"})
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), `"limit"`) {
		t.Errorf("second session while the first is open: %d %s, want 429 limit", code, body)
	}
	waitMetric(t, e, "agentloop_serve_sessions_active 0")
	acceptedSoon(t, e, second) // the slot is released just after the session closes
}

// acceptedSoon posts a message to id until it is accepted (a slot freed by
// a session closing is released right after), failing after 10 s.
func acceptedSoon(t *testing.T, e *env, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := e.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "b"})
		if code == http.StatusAccepted {
			return
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("message to %s: %d %s, want 202", id, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A tenant's daily budget is counted from the results' cost, in the
// store: once spent, new sessions of the tenant are refused with 429.
func TestTenantDailyBudget(t *testing.T) {
	costly := agentlooptest.Reply{Content: agentlooptest.Text("pricey").Content,
		Usage: model.Usage{InputTokens: 1_000_000, OutputTokens: 10}}
	e := newEnv(t, func(c *serve.Config) {
		tenants := serve.NewMemoryTenants()
		tenants.Add(tokenA, serve.Tenant{ID: "tenant-a", DailyBudgetUSD: 0.01})
		c.Tenants = tenants
		c.IdleRelease = 300 * time.Millisecond
	}, costly)
	id := e.create(tokenA, map[string]any{"model": "claude-sonnet-4-5"})
	s := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "spend"})
	s.until(isResult)
	rec := e.waitState(id, tokenA, "idle")
	if c, _ := rec["cost_usd"].(float64); c < 0.01 {
		t.Fatalf("cost of the turn %v: the test needs it above the budget", rec["cost_usd"])
	}
	// Refused while the session is still open here, and after.
	code, body := e.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "more"})
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "daily budget") {
		t.Errorf("message over the daily budget: %d %s, want 429", code, body)
	}
	waitMetric(t, e, "agentloop_serve_sessions_active 0")
	code, body = e.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "more"})
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "daily budget") {
		t.Errorf("message over the daily budget: %d %s, want 429", code, body)
	}
	if strings.Contains(metricsText(t, e), "agentloop_serve_cost_usd_total 0\n") {
		t.Error("the cost metric did not count the turn")
	}
}

// A GET that reports a session idle reports what its turns cost, even
// when the turn ends while the GET reads the record: the state is read
// before the record (the turn's end stores the cost, then turns idle).
func TestGetIdleHasCost(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	held := agentlooptest.Reply{Content: agentlooptest.Text("pricey").Content,
		Usage: model.Usage{InputTokens: 1_000_000, OutputTokens: 10},
		Expect: func(*agentlooptest.Request) error {
			close(arrived)
			<-release
			return nil
		}}
	e := newEnv(t, nil, held)
	id := e.create(tokenA, map[string]any{"model": "claude-sonnet-4-5"})
	s := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "spend"})
	<-arrived
	var once sync.Once
	t.Cleanup(serve.SetAfterGetLoad(func() {
		once.Do(func() { // the first GET: the turn ends while it reads
			close(release)
			s.until(isResult)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(metricsText(t, e), "agentloop_serve_sessions_running 0") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		})
	}))
	rec := e.must(http.StatusOK, "GET", "/v1/sessions/"+id, tokenA, nil)
	if c, _ := rec["cost_usd"].(float64); rec["state"] == "idle" && c == 0 {
		t.Errorf("GET reported the session idle with cost %v: the cost of the turn that just ended is missing", rec["cost_usd"])
	}
}

// The tokens file maps hashed tokens to tenants; malformed files fail.
func TestTenantsFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme","max_concurrent":2,"daily_budget_usd":5}]}`,
		serve.HashToken("s3cret")), 0o600)
	ts, err := serve.LoadTenantsFile(good)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.Lookup(context.Background(), serve.HashToken("s3cret"))
	if err != nil || got != (serve.Tenant{ID: "acme", MaxConcurrent: 2, DailyBudgetUSD: 5}) {
		t.Errorf("lookup: %+v %v", got, err)
	}
	if _, err := ts.Lookup(context.Background(), serve.HashToken("other")); !errors.Is(err, serve.ErrUnknownToken) {
		t.Errorf("unknown token: %v", err)
	}
	for name, body := range map[string]string{
		"plain token":   `{"tokens":[{"sha256":"s3cret","tenant":"acme"}]}`,
		"no tenant":     fmt.Sprintf(`{"tokens":[{"sha256":%q}]}`, serve.HashToken("x")),
		"unknown field": `{"tokens":[],"admin":true}`,
	} {
		p := filepath.Join(dir, "bad.json")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := serve.LoadTenantsFile(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

// Tokens in PostgreSQL: hashed, looked up by hash, each store reading
// what the other wrote. (Package pgxtenants runs this on a pgxpool.Pool.)
func TestPostgresTenants(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	tbl := pgTable(t, pool)
	ts, err := serve.NewPostgresTenantsPool(ctx, pool, tbl)
	if err != nil {
		t.Fatal(err)
	}
	other, err := serve.NewPostgresTenantsPool(ctx, pgPool(t), tbl)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Add(ctx, "tok-1", serve.Tenant{ID: "acme", MaxConcurrent: 3, DailyBudgetUSD: 1.5}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*serve.PostgresTenants{ts, other} {
		got, err := s.Lookup(ctx, serve.HashToken("tok-1"))
		if err != nil || got != (serve.Tenant{ID: "acme", MaxConcurrent: 3, DailyBudgetUSD: 1.5}) {
			t.Errorf("lookup: %+v %v", got, err)
		}
		if _, err := s.Lookup(ctx, serve.HashToken("tok-2")); !errors.Is(err, serve.ErrUnknownToken) {
			t.Errorf("unknown token: %v", err)
		}
	}
	// Replacing a row.
	if err := ts.Add(ctx, "tok-1", serve.Tenant{ID: "acme", DailyBudgetUSD: 0.1}); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Lookup(ctx, serve.HashToken("tok-1")); err != nil || got != (serve.Tenant{ID: "acme", DailyBudgetUSD: 0.1}) {
		t.Errorf("lookup after a replace: %+v %v", got, err)
	}
	rows, err := pool.Query(ctx, `SELECT count(*) FROM "`+tbl+`" WHERE token_sha256 = 'tok-1'`)
	if err != nil || len(rows) != 1 || string(rows[0][0]) != "0" {
		t.Errorf("the plain token is stored (%q, %v)", rows, err)
	}
	if _, err := serve.NewPostgresTenantsPool(ctx, nil, tbl); err == nil {
		t.Error("NewPostgresTenantsPool(nil) succeeded")
	}
	if _, err := serve.NewPostgresTenantsDB(ctx, nil, tbl); err == nil {
		t.Error("NewPostgresTenantsDB(nil) succeeded")
	}
}

// The concurrency limit holds across replicas: with a limit of 1, a
// session open on one replica makes another replica refuse a second
// session of the tenant, until the first is released.
func TestTenantConcurrencyLimitAcrossReplicas(t *testing.T) {
	store := session.NewMemoryStore()
	model := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
	limit := func(idle time.Duration) func(*serve.Config) {
		return func(c *serve.Config) {
			tenants := serve.NewMemoryTenants()
			tenants.Add(tokenA, serve.Tenant{ID: "tenant-a", MaxConcurrent: 1})
			c.Tenants = tenants
			c.IdleRelease = idle
		}
	}
	x := newEnvWith(t, model, store, limit(time.Second))
	y := newEnvWith(t, model, store, limit(time.Second))
	first, second := x.create(tokenA, nil), x.create(tokenA, nil)
	s := x.subscribe(first, tokenA, "")
	x.must(http.StatusAccepted, "POST", "/v1/sessions/"+first+"/messages", tokenA, map[string]string{"text": "a"})
	s.until(isResult)
	code, body := y.do("POST", "/v1/sessions/"+second+"/messages", tokenA, map[string]string{"text": "b"})
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "across replicas") {
		t.Fatalf("a second session on the other replica while the first is open: %d %s, want 429", code, body)
	}
	waitMetric(t, x, "agentloop_serve_sessions_active 0") // idle release frees the slot
	acceptedSoon(t, y, second)
}
