package pgxstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/postgres"
	"github.com/agentloop/agentloop/session/postgres/pgxstore"
	"github.com/agentloop/agentloop/session/storetest"
)

func connString() string { return testdb.PostgresURL() }

// testPool connects to the test database, skipping the test when the
// server is unreachable (failing instead when $CI is set).
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := testdb.OpenPostgres(t, connString(), pgxpool.New)
	return pool
}

// tempTable returns a fresh table name, dropped when the test ends.
func tempTable(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	name := "agentloop_test_" + testdb.Suffix()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return name
}

func newStore(t *testing.T) session.Store {
	t.Helper()
	pool := testPool(t)
	s, err := pgxstore.New(context.Background(), pool, &postgres.Options{Table: tempTable(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func table(s session.Store) string { return strings.Trim(s.(*postgres.Store).Table(), `"`) }

// reopen returns a Store on s's table through a pgxpool.Pool of its own,
// as another host would have.
func reopen(t *testing.T, s session.Store) session.Store {
	t.Helper()
	s2, err := pgxstore.New(context.Background(), testPool(t), &postgres.Options{Table: table(s)})
	if err != nil {
		t.Fatal(err)
	}
	return s2
}

// reopenOwn is reopen through a postgres.Pool.
func reopenOwn(t *testing.T, s session.Store) session.Store {
	t.Helper()
	pool, err := postgres.NewPool(context.Background(), connString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s2, err := postgres.NewWithPool(context.Background(), pool, &postgres.Options{Table: table(s)})
	if err != nil {
		t.Fatal(err)
	}
	return s2
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore, reopen)
}

// Stores on a pgxpool.Pool and on a postgres.Pool read each other's rows
// and hear each other's notifications, both ways round.
func TestConformanceWithOwnPool(t *testing.T) {
	t.Run("reopened on a postgres.Pool", func(t *testing.T) {
		storetest.Run(t, newStore, reopenOwn)
	})
	t.Run("reopened on a pgxpool.Pool", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) session.Store { return reopenOwn(t, newStore(t)) }, reopen)
	})
}

// The Store leaves the pool to its caller.
func TestCloseKeepsPool(t *testing.T) {
	pool := testPool(t)
	s, err := pgxstore.New(context.Background(), pool, &postgres.Options{Table: tempTable(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := pool.Ping(context.Background()); err != nil {
		t.Errorf("the pool after the Store's Close: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := pgxstore.New(ctx, nil, nil); err == nil || !strings.Contains(err.Error(), "nil pool") {
		t.Errorf("New with a nil pool: %v", err)
	}
	// The table name is refused before the pool is used.
	if _, err := pgxstore.New(ctx, &pgxpool.Pool{}, &postgres.Options{Table: "bad-name"}); err == nil ||
		!strings.Contains(err.Error(), "invalid table name") {
		t.Errorf("New with a bad table name: %v", err)
	}
}
