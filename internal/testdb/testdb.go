// Package testdb names the PostgreSQL and Redis servers agentloop's tests
// use and decides what a test does when one does not answer. Only tests
// import it.
//
// The servers are $AGENTLOOP_TEST_POSTGRES (a connection string) and
// $AGENTLOOP_TEST_REDIS (host:port), else the ones CI starts on loopback.
// A test that cannot reach one is skipped on a developer's machine and
// fails under CI (when $CI is set), where the servers are part of the run.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"
)

// PostgresURL is the connection string of the test database.
func PostgresURL() string {
	if s := os.Getenv("AGENTLOOP_TEST_POSTGRES"); s != "" {
		return s
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// RedisAddr is the host:port of the test Redis server.
func RedisAddr() string {
	if s := os.Getenv("AGENTLOOP_TEST_REDIS"); s != "" {
		return s
	}
	return "127.0.0.1:6379"
}

// PostgresUnreachable ends tb because the test database at conn did not
// answer (err): a failure under CI, a skip otherwise.
func PostgresUnreachable(tb testing.TB, conn string, err error) {
	tb.Helper()
	unreachable(tb, fmt.Sprintf("PostgreSQL unreachable at %s (set AGENTLOOP_TEST_POSTGRES): %v", conn, err))
}

// Pool is what OpenPostgres needs of a connection pool: pgxpool.Pool and
// session/postgres.Pool both are one.
type Pool interface {
	Ping(ctx context.Context) error
	Close()
}

// OpenPostgres opens a pool on the database at conn with open (pgxpool.New,
// postgres.NewPool), checks that it answers, and closes it when tb ends,
// after the cleanups registered later (which may still use it). A server
// that does not answer ends tb as PostgresUnreachable does.
func OpenPostgres[P Pool](tb testing.TB, conn string, open func(ctx context.Context, conn string) (P, error)) P {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := open(ctx, conn)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		PostgresUnreachable(tb, conn, err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// RedisUnreachable ends tb because the test Redis server at addr did not
// answer (err): a failure under CI, a skip otherwise.
func RedisUnreachable(tb testing.TB, addr string, err error) {
	tb.Helper()
	unreachable(tb, fmt.Sprintf("no Redis server at %s (set AGENTLOOP_TEST_REDIS): %v", addr, err))
}

func unreachable(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// Suffix returns 16 random hex digits, for names (tables, key prefixes)
// that tests running at once against one server must not share.
func Suffix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
