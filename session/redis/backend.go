package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
)

// backend sends a Store's commands: through the go-redis client given to
// [New] (goredisBackend), or through a redigo pool of the Store's own
// ([Open]). An interface, so that a program that never calls New does not
// link go-redis's client (whose connection set-up keeps every command
// method of its pipelines in the binary, over a megabyte), and one that
// never calls Open does not link redigo.
type backend interface {
	// eval runs a script; the reply is an int64 or a []any of them.
	eval(ctx context.Context, s *script, keys []string, args ...any) (any, error)
	publish(ctx context.Context, channel string) error
	lrange(ctx context.Context, key string, start int64) ([]string, error)
	zrangeWithScores(ctx context.Context, key string) ([]scored, error)
	smembers(ctx context.Context, key string) ([]string, error)
	// subscribe subscribes to channel (confirmed when it returns) and
	// sends a value on notices for each message, dropping those that
	// find the last unread; notices is closed when the subscription
	// ends, after stop or a lost connection.
	subscribe(ctx context.Context, channel string) (notices <-chan struct{}, stop func(), err error)
	close() error
}

type scored struct {
	member string
	score  float64
}

// script is a Lua script of the store's; each backend makes its own
// object of it on first use.
type script struct{ src string }

// int64s reads a script's reply of integers.
func int64s(reply any) ([]int64, error) {
	vs, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("script reply %T, want an array", reply)
	}
	out := make([]int64, len(vs))
	for i, v := range vs {
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("script reply element %T, want an integer", v)
		}
		out[i] = n
	}
	return out, nil
}

// goredisBackend is a go-redis client's.
type goredisBackend struct {
	c       Client
	mu      sync.Mutex
	scripts map[*script]*goredis.Script
}

func (g *goredisBackend) eval(ctx context.Context, s *script, keys []string, args ...any) (any, error) {
	g.mu.Lock()
	gs := g.scripts[s]
	if gs == nil {
		if g.scripts == nil {
			g.scripts = map[*script]*goredis.Script{}
		}
		gs = goredis.NewScript(s.src)
		g.scripts[s] = gs
	}
	g.mu.Unlock()
	return gs.Run(ctx, g.c, keys, args...).Result()
}

func (g *goredisBackend) publish(ctx context.Context, channel string) error {
	return g.c.Publish(ctx, channel, "").Err()
}

func (g *goredisBackend) lrange(ctx context.Context, key string, start int64) ([]string, error) {
	return g.c.LRange(ctx, key, start, -1).Result()
}

func (g *goredisBackend) zrangeWithScores(ctx context.Context, key string) ([]scored, error) {
	zs, err := g.c.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]scored, len(zs))
	for i, z := range zs {
		id, _ := z.Member.(string)
		out[i] = scored{id, z.Score}
	}
	return out, nil
}

func (g *goredisBackend) smembers(ctx context.Context, key string) ([]string, error) {
	return g.c.SMembers(ctx, key).Result()
}

func (g *goredisBackend) subscribe(ctx context.Context, channel string) (<-chan struct{}, func(), error) {
	sub := g.c.Subscribe(ctx, channel)
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

func (g *goredisBackend) close() error { return nil } // the caller's client

// redigoBackend is a pool of redigo connections to the server of a URL.
type redigoBackend struct {
	pool    *redigo.Pool
	url     string
	mu      sync.Mutex
	scripts map[*script]*redigo.Script
}

// Idle connections of an Open store: kept at most this many, closed
// after idleTimeout, pinged before reuse after pingAfter. A command whose
// context has no deadline waits at most ioTimeout for the server (as
// go-redis's read timeout bounds it); the subscriptions' connections wait
// as long as their watch lasts.
const (
	maxIdle     = 8
	idleTimeout = 5 * time.Minute
	pingAfter   = time.Minute
	ioTimeout   = 10 * time.Second
)

func newRedigoBackend(url string) *redigoBackend {
	return &redigoBackend{url: url, pool: &redigo.Pool{
		DialContext: func(ctx context.Context) (redigo.Conn, error) {
			return redigo.DialURLContext(ctx, url, redigo.DialReadTimeout(ioTimeout), redigo.DialWriteTimeout(ioTimeout))
		},
		MaxIdle:     maxIdle,
		IdleTimeout: idleTimeout,
		TestOnBorrowContext: func(ctx context.Context, c redigo.Conn, used time.Time) error {
			if time.Since(used) < pingAfter {
				return nil
			}
			_, err := redigo.DoContext(c, ctx, "PING")
			return err
		},
	}}
}

// do runs one command on a pooled connection.
func (r *redigoBackend) do(ctx context.Context, cmd string, args ...any) (any, error) {
	c, err := r.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redigo.DoContext(c, ctx, cmd, args...)
}

func (r *redigoBackend) eval(ctx context.Context, s *script, keys []string, args ...any) (any, error) {
	r.mu.Lock()
	rs := r.scripts[s]
	if rs == nil {
		if r.scripts == nil {
			r.scripts = map[*script]*redigo.Script{}
		}
		rs = redigo.NewScript(-1, s.src) // the key count goes first
		r.scripts[s] = rs
	}
	r.mu.Unlock()
	c, err := r.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	kv := make([]any, 0, 1+len(keys)+len(args))
	kv = append(kv, len(keys))
	for _, k := range keys {
		kv = append(kv, k)
	}
	kv = append(kv, args...)
	return rs.DoContext(ctx, c, kv...)
}

func (r *redigoBackend) publish(ctx context.Context, channel string) error {
	_, err := r.do(ctx, "PUBLISH", channel, "")
	return err
}

func (r *redigoBackend) lrange(ctx context.Context, key string, start int64) ([]string, error) {
	return redigo.Strings(r.do(ctx, "LRANGE", key, start, -1))
}

func (r *redigoBackend) zrangeWithScores(ctx context.Context, key string) ([]scored, error) {
	vs, err := redigo.Strings(r.do(ctx, "ZRANGE", key, 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, err
	}
	if len(vs)%2 != 0 {
		return nil, errors.New("ZRANGE WITHSCORES: odd reply")
	}
	out := make([]scored, 0, len(vs)/2)
	for i := 0; i < len(vs); i += 2 {
		f, err := strconv.ParseFloat(vs[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("ZRANGE WITHSCORES: score %q: %w", vs[i+1], err)
		}
		out = append(out, scored{vs[i], f})
	}
	return out, nil
}

func (r *redigoBackend) smembers(ctx context.Context, key string) ([]string, error) {
	return redigo.Strings(r.do(ctx, "SMEMBERS", key))
}

// subscribe holds a connection of its own (outside the pool) for the
// subscription.
func (r *redigoBackend) subscribe(ctx context.Context, channel string) (<-chan struct{}, func(), error) {
	c, err := redigo.DialURLContext(ctx, r.url)
	if err != nil {
		return nil, nil, err
	}
	ps := redigo.PubSubConn{Conn: c}
	if err := ps.Subscribe(channel); err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	switch v := ps.ReceiveContext(ctx).(type) { // the subscription's confirmation
	case redigo.Subscription:
	case error:
		_ = c.Close()
		return nil, nil, v
	default:
		_ = c.Close()
		return nil, nil, fmt.Errorf("SUBSCRIBE: unexpected reply %T", v)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for {
			switch ps.Receive().(type) { // ends with an error once c is closed
			case redigo.Message:
				select {
				case out <- struct{}{}:
				default:
				}
			case error:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { _ = c.Close() }) }, nil
}

func (r *redigoBackend) close() error { return r.pool.Close() }
