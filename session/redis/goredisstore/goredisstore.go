// Package goredisstore builds a [redis.Store] on a go-redis client, for
// programs that already use go-redis or need what only its clients do
// (Sentinel, Cluster, its URL options).
//
// It is a package of its own so that package redis, and every program
// that imports it, does not depend on go-redis: its client costs a
// binary over a megabyte and a build three more modules to download,
// while [redis.Open] connects through redigo.
package goredisstore

import (
	"context"
	"errors"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentloop/agentloop/session/redis"
)

// Client is the part of a go-redis client the Store uses. Every
// [goredis.UniversalClient] (*goredis.Client, *goredis.ClusterClient,
// *goredis.Ring, a failover client) implements it.
//
// It is narrower than UniversalClient on purpose: converting a client to
// an interface keeps every method of the interface in the binary, and
// UniversalClient has hundreds (over 1 MB of code, tables and type data).
type Client interface {
	goredis.Scripter
	Publish(ctx context.Context, channel string, message any) *goredis.IntCmd
	Subscribe(ctx context.Context, channels ...string) *goredis.PubSub
	LRange(ctx context.Context, key string, start, stop int64) *goredis.StringSliceCmd
	ZRangeWithScores(ctx context.Context, key string, start, stop int64) *goredis.ZSliceCmd
	SMembers(ctx context.Context, key string) *goredis.StringSliceCmd
}

var _ Client = goredis.UniversalClient(nil)

// New returns a Store that keeps transcripts through client. opts may be
// nil. The Store does not close the client.
func New(client Client, opts *redis.Options) (*redis.Store, error) {
	if client == nil {
		return nil, errors.New("goredisstore: nil client")
	}
	return redis.NewWithBackend(&backend{c: client}, opts)
}

// backend sends a Store's commands through a go-redis client.
type backend struct {
	c       Client
	mu      sync.Mutex
	scripts map[string]*goredis.Script // by source
}

func (b *backend) Eval(ctx context.Context, src string, keys []string, args ...any) (any, error) {
	b.mu.Lock()
	s := b.scripts[src]
	if s == nil {
		if b.scripts == nil {
			b.scripts = map[string]*goredis.Script{}
		}
		s = goredis.NewScript(src)
		b.scripts[src] = s
	}
	b.mu.Unlock()
	return s.Run(ctx, b.c, keys, args...).Result()
}

func (b *backend) Publish(ctx context.Context, channel string) error {
	return b.c.Publish(ctx, channel, "").Err()
}

func (b *backend) LRange(ctx context.Context, key string, start int64) ([]string, error) {
	return b.c.LRange(ctx, key, start, -1).Result()
}

func (b *backend) ZRangeWithScores(ctx context.Context, key string) ([]string, []float64, error) {
	zs, err := b.c.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, nil, err
	}
	members, scores := make([]string, len(zs)), make([]float64, len(zs))
	for i, z := range zs {
		members[i], _ = z.Member.(string)
		scores[i] = z.Score
	}
	return members, scores, nil
}

func (b *backend) SMembers(ctx context.Context, key string) ([]string, error) {
	return b.c.SMembers(ctx, key).Result()
}

func (b *backend) Subscribe(ctx context.Context, channel string) (<-chan struct{}, func(), error) {
	sub := b.c.Subscribe(ctx, channel)
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		_ = sub.Close()
		return nil, nil, err
	}
	out := make(chan struct{}, 1)
	msgs := sub.Channel() // closed by sub.Close
	go func() {
		defer close(out)
		for range msgs {
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, func() { _ = sub.Close() }, nil
}
