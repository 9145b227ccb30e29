package pgxtenants_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/serve/pgxtenants"
)

// Keep serve's tenant tokens in a table of the database a program's
// pgxpool.Pool already reaches.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://agentloop@127.0.0.1:5432/agentloop")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	tenants, err := pgxtenants.New(ctx, pool, "") // the default table, agentloop_serve_tokens
	if err != nil {
		log.Fatal(err)
	}
	cfg := serve.Config{Tenants: tenants}
	_ = cfg // with the rest of serve.Config, start the server with it
}
