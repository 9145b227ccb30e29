package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// New returns a Store keeping entries in a table of the database pool
// connects to, creating the table and its indexes if they are missing.
// The caller keeps ownership of pool: Close does not close it.
//
// A program that does not otherwise use pgx should prefer [Open] or
// [NewPool] and [NewWithPool]: a pgxpool.Pool brings pgx's type system
// into the binary (megabytes), while the Store itself only needs pgconn.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	if pool == nil {
		return nil, errNilPool
	}
	return makeStore(ctx, pgxDB{pool}, opts)
}

// pgxDB runs a Store's statements on the pgconn connections of a
// pgxpool.Pool. (Only a program that calls New links it.)
type pgxDB struct{ pool *pgxpool.Pool }

func (d pgxDB) with(ctx context.Context, f func(*pgconn.PgConn) error) error {
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release() // closes it unless idle and outside a transaction
	return f(c.Conn().PgConn())
}

func (d pgxDB) listen(ctx context.Context, notify func(string)) (listenConn, error) {
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &pgxListener{c: c, notify: notify}, nil
}

func (d pgxDB) close() { d.pool.Close() }

// pgxListener waits through pgx, which takes the notifications pgconn
// reads (also during LISTEN) into a queue of its own.
type pgxListener struct {
	c      *pgxpool.Conn
	notify func(string)
}

func (l *pgxListener) conn() *pgconn.PgConn { return l.c.Conn().PgConn() }

func (l *pgxListener) wait(ctx context.Context) error {
	n, err := l.c.Conn().WaitForNotification(ctx)
	if err != nil {
		return err
	}
	l.notify(n.Channel)
	return nil
}

func (l *pgxListener) done(reusable bool) {
	if reusable {
		l.c.Release()
		return
	}
	// Its LISTEN state must not go back to the pool.
	_ = l.c.Hijack().Close(context.Background())
}
