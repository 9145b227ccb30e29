package goredisstore_test

import (
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session/redis"
	"github.com/agentloop/agentloop/session/redis/goredisstore"
)

// Keep sessions in Redis through a go-redis client the program already
// has, for 30 days after their last write.
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()

	store, err := goredisstore.New(client, &redis.Options{TTL: 30 * 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	opts := agentloop.Options{SessionStore: store}
	_ = opts // pass &opts to agentloop.Query or agentloop.NewClient
}
