package postgres

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
)

func connString() string { return testdb.PostgresURL() }

// testPool returns a Pool on the test database, closed when the test
// ends, skipping the test when the server is unreachable (failing
// instead when $CI is set).
func testPool(t *testing.T) *Pool {
	t.Helper()
	pool := testdb.OpenPostgres(t, connString(), NewPool)
	return pool
}

// tempTable returns a fresh table name, dropped when the test ends.
func tempTable(t *testing.T, pool *Pool) string {
	t.Helper()
	name := "agentloop_test_" + testdb.Suffix()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+quoteIdent(name)); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return name
}

func newStore(t *testing.T) *Store {
	t.Helper()
	pool := testPool(t)
	s, err := NewWithPool(context.Background(), pool, &Options{Table: tempTable(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reopen returns a Store on s's table through a pool of its own, as
// another host would have.
func reopen(t *testing.T, s session.Store) session.Store {
	t.Helper()
	s2, err := NewWithPool(context.Background(), testPool(t), &Options{Table: strings.Trim(s.(*Store).Table(), `"`)})
	if err != nil {
		t.Fatal(err)
	}
	return s2
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store { return newStore(t) }, reopen)
}

var ctx = context.Background()

var key = session.Key{ProjectKey: "-home-user-proj", SessionID: "0b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"}

func TestCreateIdempotent(t *testing.T) {
	pool := testPool(t)
	table := tempTable(t, pool)
	s1, err := NewWithPool(ctx, pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	es := storetest.Conversation("aaaaaaaa")
	if err := s1.Append(ctx, key, es); err != nil {
		t.Fatal(err)
	}
	// Opening the table again, also concurrently, keeps what it holds.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = NewWithPool(ctx, pool, &Options{Table: table}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s2, err := NewWithPool(ctx, pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(es, got, storetest.Equal); diff != "" {
		t.Errorf("after re-creating the store (-want +got):\n%s", diff)
	}
}

func TestSchemaVersion(t *testing.T) {
	pool := testPool(t)
	table := tempTable(t, pool)
	if err := pool.Exec(ctx, "CREATE TABLE "+table+" (x int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWithPool(ctx, pool, &Options{Table: table}); !errors.Is(err, ErrSchemaVersion) {
		t.Errorf("New on a foreign table: %v, want ErrSchemaVersion", err)
	}
	if err := pool.Exec(ctx, "COMMENT ON TABLE "+table+" IS 'agentloop session store v999'"); err != nil {
		t.Fatal(err)
	}
	_, err := NewWithPool(ctx, pool, &Options{Table: table})
	if !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), "v999") {
		t.Errorf("New on a table of another version: %v, want ErrSchemaVersion naming v999", err)
	}
}

func TestBadTableName(t *testing.T) {
	for _, name := range []string{
		"bad-name", "1table", "a b", `x"; DROP TABLE users; --`, "a.b.c", ".x", "x.",
		"tab;le", strings.Repeat("x", 49), "ünïcode",
	} {
		if _, err := parseTable(name); err == nil {
			t.Errorf("parseTable(%q) succeeded, want an error", name)
		}
	}
	for _, name := range []string{"", "sessions", "_x1", "public.agentloop_sessions", strings.Repeat("x", 48)} {
		if _, err := parseTable(name); err != nil {
			t.Errorf("parseTable(%q): %v", name, err)
		}
	}
	// A new Store rejects the name before touching the database.
	if _, err := NewWithPool(ctx, &Pool{}, &Options{Table: "bad-name"}); err == nil || !strings.Contains(err.Error(), "invalid table name") {
		t.Errorf("New with a bad table name: %v", err)
	}
}

func TestSchemaQualified(t *testing.T) {
	pool := testPool(t)
	table := tempTable(t, pool)
	s, err := NewWithPool(ctx, pool, &Options{Table: "public." + table})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, key, storetest.Conversation("aaaaaaaa")[:2]); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, key); err != nil || len(got) != 2 {
		t.Errorf("Load = %d entries, %v; want 2", len(got), err)
	}
}

func textEntry(uuid, text string) session.Entry {
	return session.Entry{Type: session.TypeUser, UUID: uuid, SessionID: key.SessionID,
		Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock(text)}, StringContent: true}}
}

// Two Store instances (two pools, as two hosts would have) append to one
// table at once, partly the same batches (retries racing each other).
func TestTwoStores(t *testing.T) {
	p1, p2 := testPool(t), testPool(t)
	table := tempTable(t, p1)
	s1, err := NewWithPool(ctx, p1, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := NewWithPool(ctx, p2, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	batch := func(w, i int) []session.Entry {
		return []session.Entry{
			textEntry(fmt.Sprintf("%08d-0000-0000-0000-%012d", w, i), fmt.Sprint(w*1000+i)),
			textEntry(fmt.Sprintf("ffffffff-0000-0000-0000-%012d", i), "shared"), // both append it
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for w, s := range []*Store{s1, s2} {
		wg.Go(func() {
			for i := range n {
				if err := s.Append(ctx, key, batch(w, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []*Store{s1, s2} {
		got, err := s.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3*n {
			t.Fatalf("%d entries, want %d", len(got), 3*n)
		}
		last := map[int]int{0: -1, 1: -1}
		seen := map[string]bool{}
		for _, e := range got {
			if seen[e.UUID] {
				t.Errorf("uuid %s stored twice", e.UUID)
			}
			seen[e.UUID] = true
			if e.Message.Content[0].Text == "shared" {
				continue
			}
			var v int
			fmt.Sscan(e.Message.Content[0].Text, &v)
			w, i := v/1000, v%1000
			if i <= last[w] {
				t.Errorf("writer %d: entry %d after %d", w, i, last[w])
			}
			last[w] = i
		}
	}
}

func TestLargeEntry(t *testing.T) {
	s := newStore(t)
	big := strings.Repeat("0123456789abcdef\n\"é\x00", 1<<20/20+1) // > 1 MB, with escapes and NUL
	es := []session.Entry{textEntry("aaaaaaaa-0000-0000-0000-000000000001", big)}
	if err := s.Append(ctx, key, es); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Message.Content[0].Text != big {
		t.Fatalf("1 MB entry did not round-trip (%d entries)", len(got))
	}
}

func TestListModTime(t *testing.T) {
	s := newStore(t)
	before := time.Now().Add(-time.Minute)
	other := session.Key{ProjectKey: key.ProjectKey, SessionID: "1b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"}
	if err := s.Append(ctx, key, []session.Entry{textEntry("", "a")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := s.Append(ctx, other, []session.Entry{textEntry("", "b")}); err != nil {
		t.Fatal(err)
	}
	ls, err := s.List(ctx, key.ProjectKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].SessionID != other.SessionID || ls[1].SessionID != key.SessionID {
		t.Fatalf("List = %v, want most recent first", ls)
	}
	for _, l := range ls {
		if l.ModTime.Before(before) || l.ModTime.After(time.Now().Add(time.Minute)) || l.ModTime.Nanosecond()%int(time.Millisecond) != 0 {
			t.Errorf("ModTime %v: want a recent time in whole milliseconds", l.ModTime)
		}
	}
}

func TestCanceledContext(t *testing.T) {
	s := newStore(t)
	c, cancel := context.WithCancel(ctx)
	cancel()
	err := s.Append(c, key, []session.Entry{textEntry("", "x")})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "append "+key.ProjectKey) {
		t.Errorf("Append with a canceled context: %v", err)
	}
	if _, err := s.Load(c, key); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "load ") {
		t.Errorf("Load with a canceled context: %v", err)
	}
	if _, err := s.List(c, key.ProjectKey); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context: %v", err)
	}
	if err := s.Delete(c, key); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a canceled context: %v", err)
	}
	if _, err := s.ListSubkeys(c, key.ProjectKey, key.SessionID); !errors.Is(err, context.Canceled) {
		t.Errorf("ListSubkeys with a canceled context: %v", err)
	}
}

func TestOpen(t *testing.T) {
	pool := testPool(t)
	table := tempTable(t, pool)
	s, err := Open(ctx, connString(), &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := `"` + table + `"`; s.Table() != want {
		t.Errorf("Table() = %s, want %s", s.Table(), want)
	}
	if got, err := s.Load(ctx, key); err != nil || got != nil {
		t.Errorf("Load of a new table = %v, %v", got, err)
	}
	if _, err := Open(ctx, "not a :// conn string", nil); err == nil {
		t.Error("Open with a bad connection string succeeded")
	}
}
