package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
)

// LeaseSubpath is the sub-key under which writers of a session record, in
// a shared [Store], their claims to be its one writer (see [AcquireLease]).
// [Restore] does not copy it to the local layout.
const LeaseSubpath = "lease"

// TypeLease is the type of the entries under LeaseSubpath.
const TypeLease = "lease"

// DefaultLeaseTTL is how long a claim holds when LeaseOptions.TTL is 0. A
// holder renews every third of it, so a lease outlives two failed renewals
// and the hosts' clocks may disagree by much less than a TTL.
const DefaultLeaseTTL = 60 * time.Second

// ErrLeaseLost reports a lease that another writer took over because its
// holder did not renew it in time (it stalled, the store did not answer, or
// the clocks disagree by more than the TTL allows).
var ErrLeaseLost = errors.New("session: store lease lost")

// The operations a lease entry records.
const (
	leaseClaim   = "claim"
	leaseRelease = "release"
)

// leaseRecord is the content of a lease entry. At and Expires are the
// writer's clock.
type leaseRecord struct {
	Op      string    `json:"op"`
	Holder  string    `json:"holder"`
	At      time.Time `json:"at"`
	Expires time.Time `json:"expiresAt"`
}

// LeaseOptions configures AcquireLease.
type LeaseOptions struct {
	// TTL is how long each claim holds; 0 means DefaultLeaseTTL.
	TTL time.Duration
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
}

// Lease is a writer's hold on a session in a shared [Store]: while it is
// held, another writer asking for it gets [ErrSessionBusy], as a second
// local writer does from the transcript's lock. A [Mirror] given one
// renews it every RenewEvery and releases it at Close.
//
// # Algorithm
//
// The claims of a session are appended, in the store's order, under
// LeaseSubpath. Each entry is a claim {holder, at, expiresAt} (the
// holder's clock) or a release {holder}. Reading them in order gives the
// owner at each point: a claim makes its holder the owner when there is
// none, when the owner released, or when the owner's last claim expired
// before the new claim was made (expiresAt <= at); a claim by the owner
// renews (moves its expiry); a claim by another while the owner holds is
// ignored (that writer lost and must claim again later); a release by the
// owner leaves no owner. The session is held, at time now, by the owner
// after the last entry if its expiry is after now. To acquire, a writer
// appends a claim and then loads the entries: it holds the lease if it is
// that owner. To renew, it appends a fresh claim and checks the same way.
//
// # Guarantee and limits
//
// Given a store that keeps one order of appends per key and whose Load
// returns every append that completed before it began (as storetest
// checks), every writer reading the entries agrees on the owner after
// each of them, so two writers that both acquired did so at different
// points of the log, the later one after the earlier one's claim had
// expired or was released. A holder that renews before its expiry keeps
// the lease; one that stalls past it can be taken over, and learns so at
// its next renewal ([ErrLeaseLost]), possibly after writing a batch the
// new owner interleaves with. Expiry compares one host's expiresAt with
// another host's at and now, so the hosts' clocks must agree to well
// within the TTL: keep TTLs generous (a minute, not seconds). A store that
// reorders appends, or serves stale reads, breaks the guarantee. The
// entries grow by one per renewal (three a minute by default).
type Lease struct {
	store  Store
	key    Key // the LeaseSubpath key
	holder string
	ttl    time.Duration
	now    func() time.Time

	mu       sync.Mutex
	expires  time.Time
	released bool
}

// AcquireLease takes the lease of the session of key (its Subpath is
// ignored) in store. It fails with an error wrapping [ErrSessionBusy] when
// another writer holds it, naming until when; with another error when the
// store could not be written or read (the lease may then be held or not;
// it lapses after the TTL).
func AcquireLease(ctx context.Context, store Store, key Key, opts LeaseOptions) (*Lease, error) {
	if store == nil {
		return nil, errors.New("session: lease: no store")
	}
	key.Subpath = LeaseSubpath
	if err := key.Validate(); err != nil {
		return nil, err
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Lease{store: store, key: key, holder: uuid.NewString(), ttl: opts.TTL, now: opts.Now}
	if err := l.claim(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// LeaseHeld reports whether a writer holds the lease of the session of
// key (its Subpath is ignored) in store at now, and until when, without
// claiming it: a read, for showing state, never a way to decide who may
// write (only AcquireLease decides that).
func LeaseHeld(ctx context.Context, store Store, key Key, now time.Time) (bool, time.Time, error) {
	if store == nil {
		return false, time.Time{}, errors.New("session: lease: no store")
	}
	key.Subpath = LeaseSubpath
	if err := key.Validate(); err != nil {
		return false, time.Time{}, err
	}
	entries, err := store.Load(ctx, key)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("session: reading the lease of %s: %w", key.SessionID, err)
	}
	owner, until := leaseOwner(entries)
	if owner == "" || !until.After(now) {
		return false, time.Time{}, nil
	}
	return true, until, nil
}

// Holder returns the random id under which this writer claims.
func (l *Lease) Holder() string { return l.holder }

// TTL returns how long each claim holds.
func (l *Lease) TTL() time.Duration { return l.ttl }

// RenewEvery returns how often the holder should renew: a third of the TTL.
func (l *Lease) RenewEvery() time.Duration { return l.ttl / 3 }

// Expires returns when the lease lapses unless renewed.
func (l *Lease) Expires() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expires
}

// Renew extends the lease by a TTL from now. It fails with an error
// wrapping [ErrLeaseLost] when another writer took the session over, and
// with another error when the store could not be written or read.
func (l *Lease) Renew(ctx context.Context) error {
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	if released {
		return fmt.Errorf("session %s: renewing a released lease: %w", l.key.SessionID, ErrLeaseLost)
	}
	err := l.claim(ctx)
	if errors.Is(err, ErrSessionBusy) {
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// claim appends a claim and checks that this writer is the owner. A
// claim made while the previous owner still held, which lapsed before the
// check, is made again (at most twice more).
func (l *Lease) claim(ctx context.Context) error {
	for range 3 {
		at := l.now().UTC()
		rec := leaseRecord{Op: leaseClaim, Holder: l.holder, At: at, Expires: at.Add(l.ttl)}
		if err := l.store.Append(ctx, l.key, []Entry{leaseEntry(l.key.SessionID, rec)}); err != nil {
			return fmt.Errorf("session %s: claiming the store lease: %w", l.key.SessionID, err)
		}
		entries, err := l.store.Load(ctx, l.key)
		if err != nil {
			return fmt.Errorf("session %s: reading the store lease: %w", l.key.SessionID, err)
		}
		owner, until := leaseOwner(entries)
		if owner == l.holder {
			l.mu.Lock()
			l.expires = until
			l.mu.Unlock()
			return nil
		}
		if owner != "" && until.After(l.now()) {
			return fmt.Errorf("%w: session %s: another host holds it in the session store until %s; resume with ForkSession to continue in a new session, or try again after that host closes it",
				ErrSessionBusy, l.key.SessionID, until.UTC().Format(time.RFC3339))
		}
	}
	return fmt.Errorf("session %s: the store lease entries do not show this writer's claims (does the store keep the order of appends?)", l.key.SessionID)
}

// Release gives the lease up, so that another writer may take it at once.
// Calls after the first return nil.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	l.mu.Unlock()
	rec := leaseRecord{Op: leaseRelease, Holder: l.holder, At: l.now().UTC()}
	if err := l.store.Append(ctx, l.key, []Entry{leaseEntry(l.key.SessionID, rec)}); err != nil {
		return fmt.Errorf("session %s: releasing the store lease (it lapses at %s): %w",
			l.key.SessionID, l.Expires().UTC().Format(time.RFC3339), err)
	}
	return nil
}

// leaseEntry returns a lease entry of the session sessionID.
func leaseEntry(sessionID string, r leaseRecord) Entry {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	x := map[string]json.RawMessage{"op": raw(r.Op), "holder": raw(r.Holder), "at": raw(r.At)}
	if !r.Expires.IsZero() {
		x["expiresAt"] = raw(r.Expires)
	}
	return Entry{Type: TypeLease, SessionID: sessionID,
		Timestamp: r.At.Format("2006-01-02T15:04:05.000Z"), Extra: x}
}

// leaseOwner folds lease entries, in order, into the owner after the last
// one and the expiry of its last claim (see [Lease] for the rules). It
// returns "" when the last owner released. Entries it cannot parse are
// ignored.
func leaseOwner(entries []Entry) (string, time.Time) {
	var owner string
	var until time.Time
	for _, e := range entries {
		if e.Type != TypeLease {
			continue
		}
		b, err := e.MarshalJSON()
		if err != nil {
			continue
		}
		var r leaseRecord
		if json.Unmarshal(b, &r) != nil || r.Holder == "" {
			continue
		}
		switch r.Op {
		case leaseClaim:
			switch {
			case r.Holder == owner:
				until = r.Expires
			case owner == "" || !until.After(r.At):
				owner, until = r.Holder, r.Expires
			}
		case leaseRelease:
			if r.Holder == owner {
				owner, until = "", time.Time{}
			}
		}
	}
	return owner, until
}
