package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	redigo "github.com/gomodule/redigo/redis"
)

// redigoBackend is a pool of redigo connections to the server of a URL:
// the Backend of a Store made by Open.
type redigoBackend struct {
	pool    *redigo.Pool
	url     string
	mu      sync.Mutex
	scripts map[string]*redigo.Script // by source
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

// do runs one command on a pooled connection. A context already done
// fails it at once: redigo would otherwise run it on an idle connection
// and race the reply against the context.
func (r *redigoBackend) do(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := r.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redigo.DoContext(c, ctx, cmd, args...)
}

func (r *redigoBackend) Eval(ctx context.Context, src string, keys []string, args ...any) (any, error) {
	r.mu.Lock()
	rs := r.scripts[src]
	if rs == nil {
		if r.scripts == nil {
			r.scripts = map[string]*redigo.Script{}
		}
		rs = redigo.NewScript(-1, src) // the key count goes first
		r.scripts[src] = rs
	}
	r.mu.Unlock()
	if err := ctx.Err(); err != nil { // as in do
		return nil, err
	}
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

func (r *redigoBackend) Publish(ctx context.Context, channel string) error {
	_, err := r.do(ctx, "PUBLISH", channel, "")
	return err
}

func (r *redigoBackend) LRange(ctx context.Context, key string, start int64) ([]string, error) {
	return redigo.Strings(r.do(ctx, "LRANGE", key, start, -1))
}

func (r *redigoBackend) ZRangeWithScores(ctx context.Context, key string) ([]string, []float64, error) {
	vs, err := redigo.Strings(r.do(ctx, "ZRANGE", key, 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, nil, err
	}
	if len(vs)%2 != 0 {
		return nil, nil, errors.New("ZRANGE WITHSCORES: odd reply")
	}
	members := make([]string, 0, len(vs)/2)
	scores := make([]float64, 0, len(vs)/2)
	for i := 0; i < len(vs); i += 2 {
		f, err := strconv.ParseFloat(vs[i+1], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("ZRANGE WITHSCORES: score %q: %w", vs[i+1], err)
		}
		members, scores = append(members, vs[i]), append(scores, f)
	}
	return members, scores, nil
}

func (r *redigoBackend) SMembers(ctx context.Context, key string) ([]string, error) {
	return redigo.Strings(r.do(ctx, "SMEMBERS", key))
}

// subscribe holds a connection of its own (outside the pool) for the
// subscription.
func (r *redigoBackend) Subscribe(ctx context.Context, channel string) (<-chan struct{}, func(), error) {
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
