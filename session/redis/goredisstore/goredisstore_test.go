package goredisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/redis"
	"github.com/agentloop/agentloop/session/redis/goredisstore"
	"github.com/agentloop/agentloop/session/storetest"
)

func addr() string { return testdb.RedisAddr() }

// newClient connects to the test server, or skips the test when there is
// none (fails when $CI is set).
func newClient(t *testing.T) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		testdb.RedisUnreachable(t, addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testPrefix returns a random key prefix and deletes its keys when the
// test ends.
func testPrefix(t *testing.T, c *goredis.Client) string {
	t.Helper()
	prefix := "agentloop-test:" + testdb.Suffix() + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		ks, err := c.Keys(ctx, prefix+"*").Result()
		if err != nil {
			t.Errorf("listing test keys: %v", err)
		}
		if len(ks) > 0 {
			c.Del(ctx, ks...)
		}
	})
	return prefix
}

// stores remembers the options each store of a test was made with, for
// reopening it.
type stores struct {
	mu   sync.Mutex
	opts map[session.Store]redis.Options
}

func (ss *stores) add(s session.Store, o redis.Options) session.Store {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.opts == nil {
		ss.opts = map[session.Store]redis.Options{}
	}
	ss.opts[s] = o
	return s
}

func (ss *stores) of(s session.Store) redis.Options {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.opts[s]
}

// goRedis makes a store on a go-redis client of its own.
func (ss *stores) goRedis(t *testing.T, o redis.Options) session.Store {
	t.Helper()
	s, err := goredisstore.New(newClient(t), &o)
	if err != nil {
		t.Fatal(err)
	}
	return ss.add(s, o)
}

// open makes a store with redis.Open.
func (ss *stores) open(t *testing.T, o redis.Options) session.Store {
	t.Helper()
	s, err := redis.Open(context.Background(), "redis://"+addr(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ss.add(s, o)
}

// The suite on stores made on go-redis clients, reopened on go-redis
// clients and by redis.Open (and the other way round): the two backends
// read each other's keys and hear each other's notices.
func TestConformance(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		var ss stores
		fresh := func(t *testing.T) redis.Options { return redis.Options{Prefix: testPrefix(t, newClient(t)), TTL: ttl} }
		t.Run(fmt.Sprintf("ttl %v", ttl), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) session.Store { return ss.goRedis(t, fresh(t)) },
				func(t *testing.T, s session.Store) session.Store { return ss.goRedis(t, ss.of(s)) })
		})
		t.Run(fmt.Sprintf("ttl %v reopened by Open", ttl), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) session.Store { return ss.goRedis(t, fresh(t)) },
				func(t *testing.T, s session.Store) session.Store { return ss.open(t, ss.of(s)) })
		})
		t.Run(fmt.Sprintf("ttl %v made by Open", ttl), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) session.Store { return ss.open(t, fresh(t)) },
				func(t *testing.T, s session.Store) session.Store { return ss.goRedis(t, ss.of(s)) })
		})
	}
}

// With a TTL, List and ListSubkeys leave out transcripts whose entries
// expired: the replies of the scripts that ask are read through go-redis.
func TestTTLPartlyExpired(t *testing.T) {
	c := newClient(t)
	var ss stores
	s := ss.goRedis(t, redis.Options{Prefix: testPrefix(t, c), TTL: time.Hour})
	ctx := context.Background()
	const sid = "0b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"
	e := session.Entry{Type: session.TypeUser, UUID: "eeeeeeee-0001-0000-0000-000000000000", SessionID: sid,
		Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock("x")}, StringContent: true}}
	for _, sub := range []string{"", "subagents/agent-a1", "subagents/agent-a2"} {
		if err := s.Append(ctx, session.Key{ProjectKey: "-p", SessionID: sid, Subpath: sub}, []session.Entry{e}); err != nil {
			t.Fatal(err)
		}
	}
	// The list of one sub-transcript goes (as if it expired first).
	lists, err := c.Keys(ctx, ss.of(s).Prefix+"s:*agent-a2").Result()
	if err != nil || len(lists) != 1 {
		t.Fatalf("the list of agent-a2: %q, %v", lists, err)
	}
	if err := c.Del(ctx, lists[0]).Err(); err != nil {
		t.Fatal(err)
	}
	subs, err := s.ListSubkeys(ctx, "-p", sid)
	if err != nil || len(subs) != 1 || subs[0] != "subagents/agent-a1" {
		t.Errorf("ListSubkeys = %q, %v; want only subagents/agent-a1", subs, err)
	}
	ls, err := s.List(ctx, "-p")
	if err != nil || len(ls) != 1 || ls[0].SessionID != sid {
		t.Errorf("List = %+v, %v; want %s", ls, err, sid)
	}
}

// The Store leaves the client to its caller.
func TestCloseKeepsClient(t *testing.T) {
	c := newClient(t)
	s, err := goredisstore.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Errorf("the client after the Store's Close: %v", err)
	}
}

func TestNewNilClient(t *testing.T) {
	if s, err := goredisstore.New(nil, nil); err == nil || !strings.Contains(err.Error(), "nil client") {
		t.Errorf("New(nil) = %v, %v; want an error", s, err)
	}
}
