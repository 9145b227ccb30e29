package pgxstore_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session/postgres"
	"github.com/agentloop/agentloop/session/postgres/pgxstore"
)

// Keep sessions in PostgreSQL through the pgxpool.Pool a program already
// has. A program without one should use postgres.Open, which needs no
// pgxpool.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://agentloop@127.0.0.1:5432/agentloop")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	store, err := pgxstore.New(ctx, pool, &postgres.Options{Table: "agent_sessions"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // the pool stays open: it is the program's
	opts := agentloop.Options{SessionStore: store}
	_ = opts // pass &opts to agentloop.Query or agentloop.NewClient
}
