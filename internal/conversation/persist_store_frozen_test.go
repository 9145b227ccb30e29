package conversation_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/session/postgres"
	"github.com/agentloop/agentloop/session/postgres/pgxstore"
	"github.com/agentloop/agentloop/session/redis/goredisstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
)

// needServer skips the test for a missing server (binary or database),
// except under CI, where it fails.
func needServer(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// freePort returns a loopback TCP port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedis starts a private redis-server on a free port, stopped when
// the test ends, and returns its process and address.
func startRedis(t *testing.T) (*os.Process, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		needServer(t, "redis-server is not installed: %v", err)
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd.Process, addr
}

// Redis frozen (SIGSTOP) mid-run: the stream ends within the bound with a
// mirror_error, and a resume on another host, once Redis answers again,
// warns that the restored history may be truncated.
func TestSessionStoreRedisFrozen(t *testing.T) {
	proc, addr := startRedis(t)
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	store, err := goredisstore.New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	frozenCase(t, store,
		func() {
			if err := proc.Signal(syscall.SIGSTOP); err != nil {
				t.Errorf("freezing redis-server: %v", err)
			}
		},
		func() { proc.Signal(syscall.SIGCONT) })
}

// PostgreSQL with the store's table locked (ACCESS EXCLUSIVE, held by
// another connection) mid-run: the same as a frozen Redis.
func TestSessionStorePostgresLocked(t *testing.T) {
	conn := testdb.PostgresURL()
	pool := testdb.OpenPostgres(t, conn, pgxpool.New)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	table := "agentloop_frozen_" + testdb.Suffix()
	store, err := pgxstore.New(ctx, pool, &postgres.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
	})
	locker, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(context.Background()) })
	var tx pgx.Tx
	frozenCase(t, store,
		func() {
			var err error
			if tx, err = locker.Begin(context.Background()); err == nil {
				_, err = tx.Exec(context.Background(), "LOCK TABLE "+pgx.Identifier{table}.Sanitize()+" IN ACCESS EXCLUSIVE MODE")
			}
			if err != nil {
				t.Errorf("locking %s: %v", table, err)
			}
		},
		func() {
			if tx != nil {
				tx.Rollback(context.Background())
			}
		})
}
