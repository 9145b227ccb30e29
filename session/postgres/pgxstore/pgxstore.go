// Package pgxstore builds a [postgres.Store] on a pgxpool.Pool, for
// programs that already use pgx and want the store to share their pool
// and its settings.
//
// It is a package of its own so that package postgres, and every program
// that imports it, does not depend on pgxpool: a pgxpool.Pool brings
// pgx's type system into a binary (megabytes) and its pool (puddle) into
// the modules a build downloads, while the Store itself only needs
// pgconn. A program without a pgxpool.Pool should use [postgres.Open] or
// [postgres.NewWithPool].
package pgxstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/session/postgres"
)

// New returns a Store keeping entries in a table of the database pool
// connects to, creating the table and its indexes if they are missing,
// as [postgres.NewWithPool] does. The caller keeps ownership of pool:
// the Store's Close does not close it. The Store's watches each hold one
// of pool's connections while they listen.
func New(ctx context.Context, pool *pgxpool.Pool, opts *postgres.Options) (*postgres.Store, error) {
	if pool == nil {
		return nil, errors.New("pgxstore: nil pool")
	}
	return postgres.NewWithConns(ctx, conns{pool}, opts)
}

// conns lends a Store the pgconn connections under a pgxpool.Pool's.
type conns struct{ pool *pgxpool.Pool }

func (c conns) WithConn(ctx context.Context, f func(*pgconn.PgConn) error) error {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // closes it unless idle and outside a transaction
	return f(conn.Conn().PgConn())
}

func (c conns) Listen(ctx context.Context, notify func(string)) (postgres.Listener, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &listener{c: conn, notify: notify}, nil
}

// listener waits through pgx, which takes the notifications pgconn
// reads (also during LISTEN) into a queue of its own.
type listener struct {
	c      *pgxpool.Conn
	notify func(string)
}

func (l *listener) Conn() *pgconn.PgConn { return l.c.Conn().PgConn() }

func (l *listener) Wait(ctx context.Context) error {
	n, err := l.c.Conn().WaitForNotification(ctx)
	if err != nil {
		return err
	}
	l.notify(n.Channel)
	return nil
}

func (l *listener) Release(reusable bool) {
	if reusable {
		l.c.Release()
		return
	}
	// Its LISTEN state must not go back to the pool.
	_ = l.c.Hijack().Close(context.Background())
}
