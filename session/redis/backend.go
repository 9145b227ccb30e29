package redis

import (
	"context"
	"fmt"
)

// Backend sends a [Store]'s commands to Redis: [Open] makes one on a
// pool of redigo connections, and package goredisstore one on a go-redis
// client; [NewWithBackend] takes any other. It must be safe for
// concurrent use.
//
// It is this narrow on purpose: a program links only the Redis client
// that makes its Backend, so one that never builds a Store on a go-redis
// client does not link or download go-redis.
type Backend interface {
	// Eval runs the Lua script src on keys and args (EVALSHA, and EVAL
	// when the server does not know the script yet). The Store's
	// scripts reply an integer, returned as an int64, or an array of
	// integers, returned as a []any of int64.
	Eval(ctx context.Context, src string, keys []string, args ...any) (any, error)
	// Publish publishes an empty message on channel.
	Publish(ctx context.Context, channel string) error
	// LRange returns the elements of list key from index start to its
	// end (none for a missing key).
	LRange(ctx context.Context, key string, start int64) ([]string, error)
	// ZRangeWithScores returns the members of sorted set key in order,
	// with their scores.
	ZRangeWithScores(ctx context.Context, key string) (members []string, scores []float64, err error)
	// SMembers returns the members of set key.
	SMembers(ctx context.Context, key string) ([]string, error)
	// Subscribe subscribes to channel (confirmed by the server when it
	// returns) and sends a value on notices for each message, dropping
	// those that find the last one unread; notices is closed when the
	// subscription ends, after stop or a lost connection.
	Subscribe(ctx context.Context, channel string) (notices <-chan struct{}, stop func(), err error)
}

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
