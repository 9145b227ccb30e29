package redis

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/storetest"
)

func testURL() string {
	addr := os.Getenv("AGENTLOOP_TEST_REDIS")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	return "redis://" + addr
}

// openStore returns a Store made by Open on the test server with the
// given prefix (skipping as newClient does).
func openStore(t *testing.T, prefix string, ttl time.Duration) *Store {
	t.Helper()
	s, err := Open(context.Background(), testURL(), &Options{Prefix: prefix, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// The suite on stores made by Open, reopened through go-redis (and the
// other way round): the two backends read each other's keys and hear
// each other's notices.
func TestConformanceOpen(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		storetest.Run(t, func(t *testing.T) session.Store {
			return openStore(t, testPrefix(t, newClient(t)), ttl)
		}, reopen)
		storetest.Run(t, func(t *testing.T) session.Store {
			s, _ := newStore(t, ttl)
			return s
		}, func(t *testing.T, s session.Store) session.Store {
			return openStore(t, s.(*Store).prefix, ttl)
		})
	}
}

func TestOpenErrors(t *testing.T) {
	newClient(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, url := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:1", "redis://127.0.0.1:6379/x"} {
		if s, err := Open(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "redis: open") {
			t.Errorf("Open(%s) = %v, %v; want an error", url, s, err)
		}
	}
	// A go-redis option is refused by name, not dropped.
	if _, err := Open(ctx, "redis://127.0.0.1:6379/0?dial_timeout=5s&pool_size=3", nil); err == nil ||
		!strings.Contains(err.Error(), "dial_timeout, pool_size") {
		t.Errorf("Open with go-redis options: %v, want an error naming them", err)
	}
}

// TTLPartlyExpired on an Open store: its script replies are read too.
func TestOpenTTLPartlyExpired(t *testing.T) {
	c := newClient(t)
	s := openStore(t, testPrefix(t, c), time.Hour)
	ctx := context.Background()
	k1 := session.Key{ProjectKey: "-p", SessionID: sid}
	k2 := session.Key{ProjectKey: "-p", SessionID: sid, Subpath: "subagents/agent-a2"}
	for _, k := range []session.Key{k1, k2} {
		if err := s.Append(ctx, k, []session.Entry{entry(1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Del(ctx, s.keys(k2.ProjectKey, k2.SessionID, k2.Subpath).list).Err(); err != nil {
		t.Fatal(err)
	}
	subs, err := s.ListSubkeys(ctx, "-p", sid)
	if err != nil || len(subs) != 0 {
		t.Errorf("ListSubkeys = %q, %v; want none", subs, err)
	}
	ls, err := s.List(ctx, "-p")
	if err != nil || len(ls) != 1 || ls[0].SessionID != sid {
		t.Errorf("List = %+v, %v", ls, err)
	}
}
