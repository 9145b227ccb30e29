package redis_test

import (
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session/redis"
	goredis "github.com/redis/go-redis/v9"
)

// Keep sessions in Redis for 30 days after their last write, so that any
// host sharing the server can resume them.
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()

	store := redis.New(client, &redis.Options{TTL: 30 * 24 * time.Hour})
	opts := agentloop.Options{SessionStore: store}
	_ = opts // pass &opts to agentloop.Query or agentloop.NewClient
}
