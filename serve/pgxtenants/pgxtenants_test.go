package pgxtenants_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/serve/pgxtenants"
	"github.com/agentloop/agentloop/session/postgres"
)

func connString() string { return testdb.PostgresURL() }

// pgxPool connects to the test database with extra settings, skipping
// when it is unreachable unless $CI is set.
func pgxPool(t *testing.T, extra string) *pgxpool.Pool {
	t.Helper()
	conn := connString()
	if extra != "" {
		sep := "?"
		if strings.Contains(conn, "?") {
			sep = "&"
		}
		conn += sep + extra
	}
	pool := testdb.OpenPostgres(t, conn, pgxpool.New)
	return pool
}

// Tokens on a pgxpool.Pool, in each of pgx's query modes, and on a
// postgres.Pool, each reading what the other wrote.
func TestPostgresTenants(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"", "exec", "simple_protocol", "describe_exec"} {
		t.Run("mode "+mode, func(t *testing.T) {
			extra := ""
			if mode != "" {
				extra = "default_query_exec_mode=" + mode
			}
			pool := pgxPool(t, extra)
			tbl := "agentloop_pgxtenants_test_" + testdb.Suffix()
			t.Cleanup(func() { pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+pgx.Identifier{tbl}.Sanitize()) })
			pgxTS, err := pgxtenants.New(ctx, pool, tbl)
			if err != nil {
				t.Fatal(err)
			}
			own, err := postgres.NewPool(ctx, connString())
			if err != nil {
				t.Fatal(err)
			}
			defer own.Close()
			ownTS, err := serve.NewPostgresTenantsPool(ctx, own, tbl)
			if err != nil {
				t.Fatal(err)
			}
			for name, pair := range map[string][2]*serve.PostgresTenants{"pgx writes": {pgxTS, ownTS}, "own pool writes": {ownTS, pgxTS}} {
				t.Run(name, func(t *testing.T) { testTenants(t, pool, tbl, pair[0], pair[1]) })
			}
		})
	}
}

func testTenants(t *testing.T, pool *pgxpool.Pool, tbl string, ts, other *serve.PostgresTenants) {
	ctx := context.Background()
	acme := serve.Tenant{ID: "acme", MaxConcurrent: 3, DailyBudgetUSD: 1.5}
	if err := ts.Add(ctx, "tok-1", acme); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*serve.PostgresTenants{ts, other} {
		if got, err := s.Lookup(ctx, serve.HashToken("tok-1")); err != nil || got != acme {
			t.Errorf("lookup: %+v %v, want %+v", got, err, acme)
		}
		if _, err := s.Lookup(ctx, serve.HashToken("tok-2")); !errors.Is(err, serve.ErrUnknownToken) {
			t.Errorf("unknown token: %v", err)
		}
	}
	// Replacing a row.
	cheap := serve.Tenant{ID: "acme", DailyBudgetUSD: 0.1}
	if err := ts.Add(ctx, "tok-1", cheap); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Lookup(ctx, serve.HashToken("tok-1")); err != nil || got != cheap {
		t.Errorf("lookup after a replace: %+v %v, want %+v", got, err, cheap)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{tbl}.Sanitize()+" WHERE token_sha256 = 'tok-1'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the plain token is stored (%d rows, %v)", n, err)
	}
}

func TestNewNilPool(t *testing.T) {
	if _, err := pgxtenants.New(context.Background(), nil, ""); err == nil || !strings.Contains(err.Error(), "nil pool") {
		t.Errorf("New(nil): %v, want an error", err)
	}
}
