package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop/session"
)

var leaseKey = session.Key{ProjectKey: "-w", SessionID: sid}

// leaseStores are the stores the lease tests run on (two hosts share one).
var leaseStores = []struct {
	name string
	new  func(t *testing.T) session.Store
}{
	{"memory", func(t *testing.T) session.Store { return session.NewMemoryStore() }},
	{"file", func(t *testing.T) session.Store { return session.NewFileStore(t.TempDir()) }},
}

// clock is a synthetic clock for leases.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func wantBusy(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, session.ErrSessionBusy) {
		t.Fatalf("%s: %v, want ErrSessionBusy", what, err)
	}
	if !strings.Contains(err.Error(), "another host holds it") || !strings.Contains(err.Error(), "ForkSession") {
		t.Errorf("%s: error %q does not say who holds it and what to do", what, err)
	}
}

// Two mirrors (two hosts) on one store key: the second writer's lease is
// refused while the first's mirror is open, and granted once it closed.
func TestLeaseSecondWriterBusy(t *testing.T) {
	ctx := context.Background()
	for _, st := range leaseStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.new(t)
			la, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ma, _ := newMirror(t, store, session.MirrorOptions{Lease: la})
			if err := ma.Append(session.PromptEntry("", "from A", "default")); err != nil {
				t.Fatal(err)
			}
			_, err = session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
			wantBusy(t, err, "second writer while the first holds the session")
			if err := ma.Close(ctx); err != nil {
				t.Fatal(err)
			}
			lb, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
			if err != nil {
				t.Fatalf("second writer after the first closed: %v", err)
			}
			mb, _ := newMirror(t, store, session.MirrorOptions{Lease: lb})
			_, err = session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
			wantBusy(t, err, "third writer while the second holds the session")
			mb.Close(ctx)
		})
	}
}

// A lease whose holder stopped renewing is taken over once it expired, and
// the old holder then learns it lost it.
func TestLeaseExpiredTakenOver(t *testing.T) {
	ctx := context.Background()
	for _, st := range leaseStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.new(t)
			c := newClock()
			opts := session.LeaseOptions{TTL: time.Minute, Now: c.now}
			la, err := session.AcquireLease(ctx, store, leaseKey, opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.now().Add(time.Minute); !la.Expires().Equal(want) {
				t.Errorf("Expires = %v, want %v", la.Expires(), want)
			}
			c.advance(59 * time.Second)
			_, err = session.AcquireLease(ctx, store, leaseKey, opts)
			wantBusy(t, err, "before the expiry")
			c.advance(2 * time.Second)
			lb, err := session.AcquireLease(ctx, store, leaseKey, opts)
			if err != nil {
				t.Fatalf("after the expiry: %v", err)
			}
			if err := la.Renew(ctx); !errors.Is(err, session.ErrLeaseLost) {
				t.Errorf("old holder renewing after the takeover: %v, want ErrLeaseLost", err)
			}
			// The old holder's release does not free the new holder's lease.
			la.Release(ctx)
			_, err = session.AcquireLease(ctx, store, leaseKey, opts)
			wantBusy(t, err, "after the old holder released")
			if err := lb.Renew(ctx); err != nil {
				t.Errorf("new holder renewing: %v", err)
			}
		})
	}
}

// Renewing keeps a lease past its TTL: a holder that renews before each
// expiry stays the holder.
func TestLeaseRenewDirect(t *testing.T) {
	ctx := context.Background()
	store := session.NewMemoryStore()
	c := newClock()
	opts := session.LeaseOptions{TTL: time.Minute, Now: c.now}
	la, err := session.AcquireLease(ctx, store, leaseKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		c.advance(40 * time.Second)
		if err := la.Renew(ctx); err != nil {
			t.Fatalf("renewing: %v", err)
		}
	}
	_, err = session.AcquireLease(ctx, store, leaseKey, opts)
	wantBusy(t, err, "200 s after a 60 s lease was taken and renewed")
}

// A Mirror renews its lease on its own goroutine: long past the TTL the
// session is still held, and after Close it is free.
func TestMirrorRenewsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := session.NewMemoryStore()
		la, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var reported atomic.Int32
		ma, _ := newMirror(t, store, session.MirrorOptions{Lease: la,
			OnError: func(*session.MirrorError) { reported.Add(1) }})
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		_, err = session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{TTL: time.Minute})
		wantBusy(t, err, "5 min after a 1 min lease was given to a mirror")
		if err := ma.Close(ctx); err != nil {
			t.Fatal(err)
		}
		lb, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{TTL: time.Minute})
		if err != nil {
			t.Fatalf("after the mirror closed: %v", err)
		}
		lb.Release(ctx)
		if n := reported.Load(); n != 0 {
			t.Errorf("%d errors reported", n)
		}
	})
}

// leaseFails rejects appends to the lease sub-key while fail is set.
type leaseFails struct {
	session.Store
	fail atomic.Bool
}

func (s *leaseFails) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	if s.fail.Load() && k.Subpath == session.LeaseSubpath {
		return errors.New("refused")
	}
	return s.Store.Append(ctx, k, es)
}

// A mirror whose renewals failed until another writer took the session
// over reports the loss and copies nothing more to the store.
func TestMirrorLeaseLostStopsCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &leaseFails{Store: session.NewMemoryStore()}
		la, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var errs []*session.MirrorError
		ma, _ := newMirror(t, store, session.MirrorOptions{Lease: la, OnError: func(e *session.MirrorError) {
			mu.Lock()
			errs = append(errs, e)
			mu.Unlock()
		}})
		ma.Append(session.PromptEntry("", "from A", "default"))
		ma.Flush(ctx)
		store.fail.Store(true)
		time.Sleep(61 * time.Second) // two renewals fail, the lease lapses
		synctest.Wait()
		store.fail.Store(false)
		lb, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{TTL: time.Minute})
		if err != nil {
			t.Fatalf("taking over the lapsed lease: %v", err)
		}
		time.Sleep(20 * time.Second) // A's next renewal finds B
		synctest.Wait()
		ma.Append(session.PromptEntry("", "A after losing the lease", "default"))
		ma.Close(ctx)
		lb.Release(ctx)
		got, _ := store.Load(ctx, leaseKey)
		if len(got) != 1 {
			t.Errorf("store holds %d entries, want only the one copied before the lease was lost", len(got))
		}
		mu.Lock()
		defer mu.Unlock()
		var lost, dropped bool
		for _, e := range errs {
			lost = lost || errors.Is(e.Err, session.ErrLeaseLost) && len(e.Entries) == 0
			dropped = dropped || errors.Is(e.Err, session.ErrLeaseLost) && len(e.Entries) == 1
		}
		if !lost || !dropped {
			t.Errorf("reported %d errors (lease lost %v, batch dropped %v), want both", len(errs), lost, dropped)
		}
	})
}

// Restore and Import leave the lease sub-key in the store.
func TestLeaseNotRestoredOrImported(t *testing.T) {
	ctx := context.Background()
	hostA := t.TempDir()
	store := session.NewFileStore(hostA) // the local layout of host A
	l, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if err := store.Append(ctx, leaseKey, []session.Entry{session.PromptEntry("", "hi", "default")}); err != nil {
		t.Fatal(err)
	}
	hostB := t.TempDir()
	p, err := session.Restore(ctx, store, leaseKey, hostB)
	if err != nil {
		t.Fatal(err)
	}
	lease := filepath.Join(filepath.Dir(p), sid, session.LeaseSubpath+".jsonl")
	if _, err := os.Stat(lease); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("restore wrote the lease locally (%s): %v", lease, err)
	}
	other := session.NewMemoryStore()
	if _, err := session.Import(ctx, other, hostA, sid); err != nil {
		t.Fatal(err)
	}
	subs, err := other.ListSubkeys(ctx, leaseKey.ProjectKey, sid)
	if err != nil || len(subs) != 0 {
		t.Errorf("import copied sub-keys %q (%v), want none (the lease stays)", subs, err)
	}
}

// Writers racing for a free session: exactly one gets it, the others get
// ErrSessionBusy.
func TestLeaseRace(t *testing.T) {
	ctx := context.Background()
	for _, st := range leaseStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.new(t)
			const n = 8
			var wg sync.WaitGroup
			var won, busy atomic.Int32
			for range n {
				wg.Go(func() {
					_, err := session.AcquireLease(ctx, store, leaseKey, session.LeaseOptions{})
					switch {
					case err == nil:
						won.Add(1)
					case errors.Is(err, session.ErrSessionBusy):
						busy.Add(1)
					default:
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if won.Load() != 1 || busy.Load() != n-1 {
				t.Errorf("%d writers got the lease and %d were refused, want 1 and %d", won.Load(), busy.Load(), n-1)
			}
		})
	}
}

// LeaseHeld reads the lease without taking it: held while a writer holds
// it, free once released or expired.
func TestLeaseHeld(t *testing.T) {
	ctx := context.Background()
	store := session.NewMemoryStore()
	key := leaseKey
	now := time.Now()
	if held, _, err := session.LeaseHeld(ctx, store, key, now); err != nil || held {
		t.Fatalf("no lease yet: held %v, %v", held, err)
	}
	l, err := session.AcquireLease(ctx, store, key, session.LeaseOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	held, until, err := session.LeaseHeld(ctx, store, key, time.Now())
	if err != nil || !held || until.Before(now.Add(59*time.Second)) {
		t.Fatalf("held lease: %v until %v, %v", held, until, err)
	}
	if held, _, _ := session.LeaseHeld(ctx, store, key, time.Now().Add(2*time.Minute)); held {
		t.Fatal("an expired lease reads as held")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if held, _, _ := session.LeaseHeld(ctx, store, key, time.Now()); held {
		t.Fatal("a released lease reads as held")
	}
	if _, err := session.AcquireLease(ctx, store, key, session.LeaseOptions{}); err != nil {
		t.Fatalf("reading must not have taken it: %v", err)
	}
}
