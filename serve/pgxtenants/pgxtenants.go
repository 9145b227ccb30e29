// Package pgxtenants builds a [serve.PostgresTenants] on a pgxpool.Pool,
// for programs that already use pgx.
//
// It is a package of its own so that package serve, and the agentloop
// command, do not depend on pgxpool (pgx's type system in the binary, its
// pool's module in every build); [serve.NewPostgresTenantsPool] takes the
// lighter postgres.Pool of the session store.
package pgxtenants

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/serve"
)

// New returns a PostgresTenants on table (empty means
// agentloop_serve_tokens) of pool's database, creating the table if
// needed. The caller keeps ownership of pool.
func New(ctx context.Context, pool *pgxpool.Pool, table string) (*serve.PostgresTenants, error) {
	if pool == nil {
		return nil, errors.New("pgxtenants: nil pool")
	}
	return serve.NewPostgresTenantsDB(ctx, db{pool}, table)
}

// db runs the statements of a PostgresTenants on a pgxpool.Pool.
type db struct{ pool *pgxpool.Pool }

func (d db) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := d.pool.Exec(ctx, sql, args...)
	return err
}

// textResults asks for every result column in text format, as
// serve.TenantsDB returns them, in each of pgx's query modes.
var textResults = pgx.QueryResultFormats{0}

func (d db) Query(ctx context.Context, sql string, args ...any) ([][][]byte, error) {
	rows, err := d.pool.Query(ctx, sql, append([]any{textResults}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][][]byte
	for rows.Next() {
		raw := rows.RawValues() // valid until the next row
		r := make([][]byte, len(raw))
		for i, v := range raw {
			if v != nil {
				r[i] = append([]byte{}, v...)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
