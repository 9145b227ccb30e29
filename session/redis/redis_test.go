package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/storetest"
	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"
)

const sid = "0b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"

// newClient connects a go-redis client, which the tests use to look at
// the keys, to the test server, or skips the test when there is none
// (fails when $CI is set).
func newClient(t *testing.T) goredis.UniversalClient {
	t.Helper()
	addr := testdb.RedisAddr()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		testdb.RedisUnreachable(t, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testPrefix returns a random key prefix and deletes its keys when the
// test ends.
func testPrefix(t *testing.T, c goredis.UniversalClient) string {
	t.Helper()
	prefix := "agentloop-test:" + testdb.Suffix() + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var ks []string
		for iter.Next(ctx) {
			ks = append(ks, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scanning test keys: %v", err)
		}
		for _, k := range ks {
			c.Del(ctx, k)
		}
	})
	return prefix
}

// newStore returns a Store made by Open on a fresh key prefix, and a
// client to look at the keys it writes.
func newStore(t *testing.T, ttl time.Duration) (*Store, goredis.UniversalClient) {
	c := newClient(t)
	return openStore(t, testPrefix(t, c), ttl), c
}

// reopen returns a Store on s's key prefix through a pool of its own, as
// another host would have.
func reopen(t *testing.T, s session.Store) session.Store {
	rs := s.(*Store)
	return openStore(t, rs.prefix, rs.ttl)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		s, _ := newStore(t, 0)
		return s
	}, reopen)
}

func TestConformanceTTL(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		s, _ := newStore(t, time.Hour)
		return s
	}, reopen)
}

func entry(n int) session.Entry {
	return session.Entry{Type: session.TypeUser, UUID: fmt.Sprintf("eeeeeeee-%04d-0000-0000-000000000000", n),
		SessionID: sid, Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock(fmt.Sprint(n))}, StringContent: true}}
}

// Two hosts append overlapping batches (as a retried mirror would) to one
// transcript at once: every uuid is stored once, in order.
func TestConcurrentOverlappingAppends(t *testing.T) {
	prefix := testPrefix(t, newClient(t))
	stores := []*Store{openStore(t, prefix, 0), openStore(t, prefix, 0)}
	key := session.Key{ProjectKey: "-p", SessionID: sid}
	const n = 200
	var all []session.Entry
	for i := range n {
		all = append(all, entry(i))
	}
	// Appender i sends windows of width[i] entries, advancing by step[i]:
	// each batch overlaps the one before.
	width, step := []int{5, 4}, []int{2, 3}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for a, s := range stores {
		wg.Go(func() {
			for j := 0; j < n; j += step[a] {
				if err := s.Append(context.Background(), key, all[j:min(j+width[a], n)]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := stores[0].Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	// Both appenders send entries in order, each batch after the batches
	// that cover everything before it, so the transcript is exactly all.
	if diff := cmp.Diff(all, got, storetest.Equal); diff != "" {
		t.Errorf("after concurrent overlapping appends (-want +got):\n%s", diff)
	}
}

// A ':' (or a brace or percent sign) in a project key cannot make two
// keys collide.
func TestColonInProjectKey(t *testing.T) {
	s, c := newStore(t, 0)
	ctx := context.Background()
	keys := []session.Key{
		{ProjectKey: "a:b", SessionID: "c"},
		{ProjectKey: "a", SessionID: "b"},
		{ProjectKey: "a", SessionID: "b", Subpath: "c"},
		{ProjectKey: "a:b:c", SessionID: "d"},
		{ProjectKey: "a%3Ab", SessionID: "c"},
		{ProjectKey: "x}:{y", SessionID: "c"},
	}
	for i, k := range keys {
		if err := s.Append(ctx, k, []session.Entry{entry(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range keys {
		got, err := s.Load(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]session.Entry{entry(i)}, got, storetest.Equal); diff != "" {
			t.Errorf("Load(%+v) (-want +got):\n%s", k, diff)
		}
	}
	for _, tc := range []struct {
		project string
		want    []string
	}{{"a:b", []string{"c"}}, {"a", []string{"b"}}, {"a%3Ab", []string{"c"}}, {"x}:{y", []string{"c"}}} {
		ls, err := s.List(ctx, tc.project)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range ls {
			ids = append(ids, l.SessionID)
		}
		if diff := cmp.Diff(tc.want, ids); diff != "" {
			t.Errorf("List(%q) (-want +got):\n%s", tc.project, diff)
		}
	}
	// The project key is encoded inside the hash tag.
	if n, err := c.Exists(ctx, s.prefix+"s:{a%3Ab}:c:").Result(); err != nil || n != 1 {
		t.Errorf("key of project a:b not found: %d, %v", n, err)
	}
	// Deleting one session leaves the look-alikes.
	if err := s.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[1:] {
		if got, err := s.Load(ctx, k); err != nil || len(got) != 1 {
			t.Errorf("Load(%+v) after deleting a:b/c = %d entries, %v", k, len(got), err)
		}
	}
}

func TestTTL(t *testing.T) {
	s, c := newStore(t, time.Minute)
	ctx := context.Background()
	main := session.Key{ProjectKey: "-p", SessionID: sid}
	sub := session.Key{ProjectKey: "-p", SessionID: sid, Subpath: "subagents/agent-a1"}
	for _, k := range []session.Key{main, sub} {
		if err := s.Append(ctx, k, []session.Entry{entry(1)}); err != nil {
			t.Fatal(err)
		}
	}
	km, ks := s.keys(main.ProjectKey, main.SessionID, ""), s.keys(sub.ProjectKey, sub.SessionID, sub.Subpath)
	for _, k := range []string{km.list, km.uuids, km.project, km.subkeys, ks.list, ks.uuids} {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Minute {
			t.Errorf("PTTL(%s) = %v, want in (0, 1m]", k, ttl)
		}
	}

	// Expired transcripts disappear from Load, List and ListSubkeys.
	short, _ := newStore(t, 150*time.Millisecond)
	for _, k := range []session.Key{main, sub} {
		if err := short.Append(ctx, k, []session.Entry{entry(1)}); err != nil {
			t.Fatal(err)
		}
	}
	if ls, err := short.List(ctx, "-p"); err != nil || len(ls) != 1 {
		t.Fatalf("List before expiry = %v, %v", ls, err)
	}
	time.Sleep(400 * time.Millisecond)
	for _, k := range []session.Key{main, sub} {
		if got, err := short.Load(ctx, k); err != nil || got != nil {
			t.Errorf("Load(%+v) after expiry = %v, %v; want nil", k, got, err)
		}
	}
	if ls, err := short.List(ctx, "-p"); err != nil || len(ls) != 0 {
		t.Errorf("List after expiry = %v, %v", ls, err)
	}
	if subs, err := short.ListSubkeys(ctx, "-p", sid); err != nil || len(subs) != 0 {
		t.Errorf("ListSubkeys after expiry = %v, %v", subs, err)
	}
}

func TestLargeEntry(t *testing.T) {
	s, _ := newStore(t, 0)
	ctx := context.Background()
	key := session.Key{ProjectKey: "-p", SessionID: sid}
	big := entry(1)
	big.Message.Content = []model.Content{model.TextBlock(strings.Repeat("0123456789abcdef", 1<<16))} // 1 MiB
	es := []session.Entry{entry(0), big, entry(2)}
	if err := s.Append(ctx, key, es); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(es, got, storetest.Equal); diff != "" {
		t.Errorf("1 MiB entry (-want +got):\n%s", diff[:min(len(diff), 2000)])
	}
}

func TestErrors(t *testing.T) {
	s, _ := newStore(t, 0)
	key := session.Key{ProjectKey: "-p", SessionID: sid}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, key, []session.Entry{entry(1)}); err == nil || !strings.Contains(err.Error(), "append -p/"+sid) {
		t.Errorf("Append with a cancelled context = %v", err)
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("Append error %v does not wrap context.Canceled", err)
	}
	if _, err := s.Load(ctx, key); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context = %v", err)
	}
}

// With a TTL, List and ListSubkeys ask which transcripts still have
// entries (the lists can expire before the index sets, which a later
// write to another transcript keeps alive): here two of four are gone.
func TestTTLPartlyExpired(t *testing.T) {
	s, c := newStore(t, time.Hour)
	ctx := context.Background()
	const other = "1b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"
	keys := []session.Key{
		{ProjectKey: "-p", SessionID: sid},
		{ProjectKey: "-p", SessionID: other},
		{ProjectKey: "-p", SessionID: sid, Subpath: "subagents/agent-a1"},
		{ProjectKey: "-p", SessionID: sid, Subpath: "subagents/agent-a2"},
	}
	for _, k := range keys {
		if err := s.Append(ctx, k, []session.Entry{entry(1)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []session.Key{keys[1], keys[3]} {
		if err := c.Del(ctx, s.keys(k.ProjectKey, k.SessionID, k.Subpath).list).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := s.List(ctx, "-p")
	if err != nil || len(ls) != 1 || ls[0].SessionID != sid {
		t.Errorf("List = %+v, %v; want only %s", ls, err, sid)
	}
	subs, err := s.ListSubkeys(ctx, "-p", sid)
	if err != nil || len(subs) != 1 || subs[0] != "subagents/agent-a1" {
		t.Errorf("ListSubkeys = %q, %v; want only subagents/agent-a1", subs, err)
	}
}
