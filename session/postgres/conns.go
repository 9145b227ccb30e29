package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Conns lends a [Store] the connections it runs its statements on, all
// through pgconn: a [Pool] (see [NewWithPool]), or another pool wrapped
// by [NewWithConns] (package pgxstore wraps a pgxpool.Pool so). It must be
// safe for concurrent use.
type Conns interface {
	// WithConn runs f on one connection, outside any transaction, and
	// takes the connection back once f returns. A connection f leaves
	// closed, busy or inside a transaction (a rollback that failed) must
	// not be lent again.
	WithConn(ctx context.Context, f func(*pgconn.PgConn) error) error
	// Listen returns a connection for LISTEN, kept until its Release and
	// lent to nobody else meanwhile, whose notifications go to notify
	// with their channel.
	Listen(ctx context.Context, notify func(channel string)) (Listener, error)
}

// Listener is the connection a Store's watches listen on, from
// [Conns.Listen].
type Listener interface {
	// Conn is the connection, on which the Store sends its LISTEN and
	// UNLISTEN statements.
	Conn() *pgconn.PgConn
	// Wait returns once a notification went to Listen's notify, or with
	// the error that ended the wait (ctx's when ctx ends first).
	Wait(ctx context.Context) error
	// Release gives the connection up: back to its pool if reusable (it
	// listens to nothing any more), closed if not.
	Release(reusable bool)
}

// poolConns lends a Store the connections of a Pool.
type poolConns struct{ p *Pool }

func (c poolConns) WithConn(ctx context.Context, f func(*pgconn.PgConn) error) error {
	return c.p.with(ctx, f)
}

// Listen opens a connection of its own (not counted in pool_max_conns):
// pgconn hands notifications to the connection's configured handler.
func (c poolConns) Listen(ctx context.Context, notify func(channel string)) (Listener, error) {
	p := c.p
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errPoolClosed
	}
	cfg := p.cfg.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { notify(n.Channel) }
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return ownListener{conn}, nil
}

type ownListener struct{ c *pgconn.PgConn }

func (l ownListener) Conn() *pgconn.PgConn           { return l.c }
func (l ownListener) Wait(ctx context.Context) error { return l.c.WaitForNotification(ctx) }
func (l ownListener) Release(bool)                   { closeConn(l.c) }
