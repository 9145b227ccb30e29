package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session/postgres"
)

// Sessions kept in PostgreSQL can be resumed on any host using the same
// database.
func Example() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	opts := &agentloop.Options{SessionStore: store}
	for msg, err := range agentloop.Query(ctx, "Summarize README.md", opts) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%T\n", msg)
	}
}
