package redis_test

import (
	"context"
	"log"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session/redis"
)

// Keep sessions in Redis for 30 days after their last write, so that any
// host sharing the server can resume them.
func Example() {
	ctx := context.Background()
	store, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", &redis.Options{TTL: 30 * 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	opts := agentloop.Options{SessionStore: store}
	_ = opts // pass &opts to agentloop.Query or agentloop.NewClient
}
