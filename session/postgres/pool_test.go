package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// ownPool returns a Pool on the test database with extra settings
// (skipping as testPool does), closed when the test ends.
func ownPool(t *testing.T, extra string) *Pool {
	t.Helper()
	testPool(t) // skips when unreachable
	cs := connString()
	if extra != "" {
		sep := "?"
		if strings.Contains(cs, "?") {
			sep = "&"
		}
		cs += sep + extra
	}
	p, err := NewPool(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestPoolQuery(t *testing.T) {
	p := ownPool(t, "")
	var null *string
	s := "x"
	rows, err := p.Query(ctx, "SELECT $1::text, $2::text, $3::bytea, $4::bigint, $5::float8, $6::bool, $7::text, $8::int",
		"a'b", null, []byte{0, 1, 2}, int64(-7), 0.25, true, &s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a'b", "<nil>", `\x000102`, "-7", "0.25", "t", "x", "<nil>"}
	if len(rows) != 1 || len(rows[0]) != len(want) {
		t.Fatalf("rows = %q", rows)
	}
	for i, v := range rows[0] {
		got := "<nil>"
		if v != nil {
			got = string(v)
		}
		if got != want[i] {
			t.Errorf("column %d = %q, want %q", i+1, got, want[i])
		}
	}
	if err := p.Exec(ctx, "SELECT $1", struct{}{}); err == nil || !strings.Contains(err.Error(), "unsupported type") {
		t.Errorf("Exec with a struct argument: %v", err)
	}
}

func TestPoolOptions(t *testing.T) {
	// pgxpool's settings the pool has are honoured (not sent to the
	// server, which would refuse them).
	p := ownPool(t, "pool_max_conns=1&pool_max_conn_lifetime=2h&pool_max_conn_idle_time=5m")
	if cap(p.sem) != 1 || p.maxLife != 2*time.Hour || p.maxIdle != 5*time.Minute {
		t.Errorf("pool_max_conns=1, lifetime 2h, idle 5m gave %d connections, %v, %v", cap(p.sem), p.maxLife, p.maxIdle)
	}
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// With the one connection held, another acquire waits for it.
	ic, err := p.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := p.Exec(short, "SELECT 1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec while the only connection is held: %v", err)
	}
	p.release(ic)
	if err := p.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("Exec once it is given back: %v", err)
	}
	// The others are refused by name, never dropped in silence.
	for _, bad := range []string{"pool_max_conns=0", "pool_max_conns=x", "pool_max_conn_lifetime=soon",
		"pool_min_conns=2", "pool_health_check_period=1m", "statement_cache_capacity=0", "default_query_exec_mode=exec"} {
		cs := connString() + "?" + bad
		if strings.Contains(connString(), "?") {
			cs = connString() + "&" + bad
		}
		key, _, _ := strings.Cut(bad, "=")
		if _, err := NewPool(ctx, cs); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("NewPool with %s: %v, want an error naming %s", bad, err, key)
		}
	}
}

// A connection the server ended while it was idle (longer than
// pingAfter: a ping finds it dead) is not handed out again: the next
// statement runs on a new one.
func TestPoolDeadIdleConnection(t *testing.T) {
	p := ownPool(t, "pool_max_conns=1")
	rows, err := p.Query(ctx, "SELECT pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	pid := string(rows[0][0])
	if err := testPoolExec(t, "SELECT pg_terminate_backend("+pid+")"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pingAfter + 100*time.Millisecond)
	rows, err = p.Query(ctx, "SELECT pg_backend_pid()")
	if err != nil {
		t.Fatalf("statement after the idle connection died: %v", err)
	}
	if string(rows[0][0]) == pid {
		t.Errorf("same backend %s after it was terminated", pid)
	}
}

func testPoolExec(t *testing.T, sql string) error {
	return testPool(t).Exec(ctx, sql)
}

func TestPoolClosed(t *testing.T) {
	p := ownPool(t, "")
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := p.Exec(ctx, "SELECT 1"); !errors.Is(err, errPoolClosed) {
		t.Errorf("Exec after Close: %v", err)
	}
	p.Close() // again: nothing
}

func TestNewWithNilPool(t *testing.T) {
	if _, err := NewWithPool(ctx, nil, nil); err == nil {
		t.Error("NewWithPool(nil) succeeded")
	}
	if _, err := NewWithConns(ctx, nil, nil); err == nil {
		t.Error("NewWithConns(nil) succeeded")
	}
}
