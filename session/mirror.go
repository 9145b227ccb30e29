package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// MirrorBackoff is the wait before each retry of a failed store append: a
// batch gets len(MirrorBackoff)+1 attempts.
var MirrorBackoff = []time.Duration{200 * time.Millisecond, 800 * time.Millisecond}

// DefaultMirrorTimeout bounds one store append; an attempt that times out
// is not retried.
const DefaultMirrorTimeout = 60 * time.Second

// DefaultRestoreTimeout bounds bringing a session over from a store when a
// resumed session is not on this host (agentloop applies it on top of the
// Query's context).
const DefaultRestoreTimeout = 30 * time.Second

// MirrorError reports a batch a Mirror could not copy to its store. The
// batch is dropped; the local transcript has it.
type MirrorError struct {
	Key      Key
	Entries  []Entry
	Attempts int
	Err      error
}

func (e *MirrorError) Error() string {
	if len(e.Entries) == 0 {
		return fmt.Sprintf("session: mirror %s/%s: %v", e.Key.ProjectKey, e.Key.SessionID, e.Err)
	}
	return fmt.Sprintf("session: mirror %s/%s: %d entries not stored after %d attempts: %v",
		e.Key.ProjectKey, e.Key.SessionID, len(e.Entries), e.Attempts, e.Err)
}

func (e *MirrorError) Unwrap() error { return e.Err }

// MirrorOptions configures a Mirror.
type MirrorOptions struct {
	// OnError receives each batch that could not be stored. The loop turns
	// it into a system/mirror_error message. It is called from the
	// Mirror's goroutine, and from Close for the batches Close drops, so
	// it must be safe for concurrent use.
	OnError func(*MirrorError)
	// Sleep waits between attempts; nil uses a timer. It returns early
	// with ctx's error when ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
	// Timeout bounds each attempt; 0 means DefaultMirrorTimeout.
	Timeout time.Duration
	// TrackState records in the store, under MirrorStateSubpath, that
	// this writer started copying (before its first batch) and, at a
	// Close within its context, how many entries were not stored, so that
	// a restore elsewhere can tell a copy known or suspected to be behind
	// (see [LoadStoreState]). It costs one store append at the start and
	// one at Close.
	TrackState bool
	// Lease, when set, is the writer's hold on the session in the store
	// (see [AcquireLease]); the Mirror then owns it: its own goroutine
	// renews it every Lease.RenewEvery, and Close releases it after the
	// last copy. If the lease is lost to another writer, the batches that
	// follow are not copied (each is reported to OnError), so that two
	// writers do not interleave in the store. Renewal failures are
	// reported to OnError with no entries.
	Lease *Lease
}

// Mirror writes entries to a local transcript and copies each batch to a
// Store once the local write has succeeded (dual write), so that the
// session can be resumed on another host with [Restore].
//
// Append returns as soon as the local write is done; the copies are made
// in order by a goroutine, which retries a failed store append up to two
// times (after 0.2 s and 0.8 s) and then reports the batch to OnError and
// drops it. Flush waits for the copies.
type Mirror struct {
	w     *Writer
	store Store
	key   Key
	opts  MirrorOptions

	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	queue      [][]Entry
	inflight   int // entries of the batch being copied
	running    bool
	done       chan struct{} // closed when the running goroutine exits
	lost       int           // entries reported to OnError
	opened     bool          // the open state record is stored
	openFailed bool          // storing it failed; retried after a stored batch
	started    bool          // a batch was queued
	writer     string        // this writer's id in state records
	leaseErr   error         // the lease was lost: nothing more is copied

	renewStop context.CancelFunc // stops the lease renewal
	renewDone chan struct{}      // closed when the renewal goroutine exits
}

// NewMirror returns a Mirror writing to w and copying to store under key.
func NewMirror(w *Writer, store Store, key Key, opts MirrorOptions) *Mirror {
	ctx, cancel := context.WithCancel(context.Background())
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultMirrorTimeout
	}
	m := &Mirror{w: w, store: store, key: key, opts: opts, ctx: ctx, cancel: cancel, writer: uuid.NewString()}
	if opts.Lease != nil {
		rctx, stop := context.WithCancel(ctx)
		m.renewStop, m.renewDone = stop, make(chan struct{})
		go m.renew(rctx, m.renewDone)
	}
	return m
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Writer returns the local writer.
func (m *Mirror) Writer() *Writer { return m.w }

// Key returns the store key.
func (m *Mirror) Key() Key { return m.key }

// Append writes entries locally (see [Writer.Append]) and queues the batch,
// as written, for the store. A local failure is returned and nothing is
// queued.
func (m *Mirror) Append(entries ...Entry) error {
	out, err := m.w.appendEntries(entries)
	if err != nil || len(out) == 0 {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = append(m.queue, out)
	m.started = true
	if !m.running {
		m.running = true
		m.done = make(chan struct{})
		go m.run(m.done)
	}
	return nil
}

// run copies queued batches until the queue is empty.
func (m *Mirror) run(done chan struct{}) {
	defer close(done)
	for {
		m.mu.Lock()
		if len(m.queue) == 0 {
			m.running = false
			m.mu.Unlock()
			return
		}
		b := m.queue[0]
		m.queue = m.queue[1:]
		m.inflight = len(b)
		m.mu.Unlock()
		m.forward(b)
		m.mu.Lock()
		m.inflight = 0
		m.mu.Unlock()
	}
}

// forward copies one batch, retrying, and reports a final failure.
func (m *Mirror) forward(batch []Entry) {
	m.mu.Lock()
	lost := m.leaseErr
	m.mu.Unlock()
	if lost != nil {
		m.report(&MirrorError{Key: m.key, Entries: batch, Err: lost})
		return
	}
	m.open()
	attempts := len(MirrorBackoff) + 1
	var err error
	n := 0
	for n < attempts {
		n++
		actx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
		err = m.store.Append(actx, m.key, batch)
		timedOut := err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && m.ctx.Err() == nil
		cancel()
		if err == nil {
			m.mu.Lock()
			retryOpen := m.openFailed
			m.openFailed = false
			m.mu.Unlock()
			if retryOpen {
				m.open()
			}
			return
		}
		if timedOut || m.ctx.Err() != nil || n == attempts {
			break
		}
		if serr := m.opts.Sleep(m.ctx, MirrorBackoff[n-1]); serr != nil {
			break
		}
	}
	m.report(&MirrorError{Key: m.key, Entries: batch, Attempts: n, Err: err})
}

// report counts a batch as lost and hands it to OnError.
func (m *Mirror) report(e *MirrorError) {
	m.mu.Lock()
	m.lost += len(e.Entries)
	m.mu.Unlock()
	if m.opts.OnError != nil {
		m.opts.OnError(e)
	}
}

// open stores the open state record before the first batch, when state
// is tracked. After a failure it is not tried again before each batch (a
// store that does not answer would cost each batch two timeouts), only
// once a batch was stored.
func (m *Mirror) open() {
	m.mu.Lock()
	skip := !m.opts.TrackState || m.opened || m.openFailed
	m.mu.Unlock()
	if skip {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	defer cancel()
	err := m.putState(ctx, mirrorOpen, 0)
	m.mu.Lock()
	m.opened, m.openFailed = err == nil, err != nil
	m.mu.Unlock()
}

// putState appends one state record.
func (m *Mirror) putState(ctx context.Context, state string, lost int) error {
	k := Key{ProjectKey: m.key.ProjectKey, SessionID: m.key.SessionID, Subpath: MirrorStateSubpath}
	return m.store.Append(ctx, k, []Entry{stateEntry(m.key.SessionID, mirrorState{State: state, Writer: m.writer, Lost: lost})})
}

// Pending returns how many entries are queued or being copied.
func (m *Mirror) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.inflight
	for _, b := range m.queue {
		n += len(b)
	}
	return n
}

// Lost returns how many entries were reported to OnError so far.
func (m *Mirror) Lost() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lost
}

// Flush waits until every queued batch has been copied or reported, or ctx
// is done.
func (m *Mirror) Flush(ctx context.Context) error {
	for {
		m.mu.Lock()
		running, done := m.running, m.done
		m.mu.Unlock()
		if !running {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close flushes, records the close in the store when state is tracked
// (see MirrorOptions.TrackState), then closes the writer, and returns
// within ctx: it never
// waits for a store call past ctx's end. If ctx ends first, the batches
// still queued are dropped and reported to OnError, the copy in progress
// is abandoned (its context is cancelled; it is reported to OnError when
// the store returns), and the error wraps ctx's error.
func (m *Mirror) Close(ctx context.Context) error {
	err := m.Flush(ctx)
	if err == nil {
		m.closeState(ctx)
	}
	m.releaseLease(ctx)
	m.cancel()
	if err != nil {
		m.mu.Lock()
		dropped := m.queue
		m.queue = nil
		m.mu.Unlock()
		for _, b := range dropped {
			m.report(&MirrorError{Key: m.key, Entries: b, Err: err})
		}
		err = fmt.Errorf("session: mirror %s/%s: closing with copies not stored (%d queued batches dropped, the copy in progress abandoned): %w",
			m.key.ProjectKey, m.key.SessionID, len(dropped), err)
	}
	if cerr := m.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// closeState records, when state is tracked and a batch was copied (or
// tried), that this writer closed and how many entries it lost. Without
// it, a restore sees the writer as never finished.
func (m *Mirror) closeState(ctx context.Context) {
	m.mu.Lock()
	track, lost, started := m.opts.TrackState, m.lost, m.started
	m.mu.Unlock()
	if !track || !started {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	if err := m.putState(sctx, mirrorClosed, lost); err != nil && m.opts.OnError != nil {
		m.opts.OnError(&MirrorError{Key: Key{ProjectKey: m.key.ProjectKey, SessionID: m.key.SessionID,
			Subpath: MirrorStateSubpath}, Attempts: 1, Err: fmt.Errorf("recording the close: %w", err)})
	}
}

// KeyForPath returns the store key of a transcript file under
// <configDir>/projects: <projectKey>/<sessionId>.jsonl, or
// <projectKey>/<sessionId>/<subpath>.jsonl.
func KeyForPath(configDir, path string) (Key, error) {
	rel, err := filepath.Rel(ProjectsDir(configDir), path)
	if err != nil || !strings.HasSuffix(rel, ".jsonl") {
		return Key{}, fmt.Errorf("session: %s is not a transcript under %s", path, ProjectsDir(configDir))
	}
	parts := strings.Split(filepath.ToSlash(strings.TrimSuffix(rel, ".jsonl")), "/")
	var k Key
	switch {
	case len(parts) == 2:
		k = Key{ProjectKey: parts[0], SessionID: parts[1]}
	case len(parts) > 2:
		k = Key{ProjectKey: parts[0], SessionID: parts[1], Subpath: strings.Join(parts[2:], "/")}
	default:
		return Key{}, fmt.Errorf("session: %s is not a transcript under %s", path, ProjectsDir(configDir))
	}
	if err := k.Validate(); err != nil {
		return Key{}, err
	}
	return k, nil
}

// Restore copies a session from a store into the local layout under
// configDir ("" for the default): the main transcript to
// <configDir>/projects/<ProjectKey>/<SessionID>.jsonl and its
// sub-transcripts beside it, replacing local copies. It returns the main
// transcript's path, which [Find] then finds for resuming. It returns an
// error wrapping [ErrNotFound] when the store does not have the session.
// The mirror-state records are not copied; see [RestoreChecked].
func Restore(ctx context.Context, store Store, key Key, configDir string) (string, error) {
	p, _, err := RestoreChecked(ctx, store, key, configDir)
	return p, err
}

// RestoreChecked is [Restore] that also returns what the store's
// mirror-state records say about its copy (see
// MirrorOptions.TrackState): when StoreState.Behind, the restored history
// may be missing entries that were written on the host that ran the
// session.
func RestoreChecked(ctx context.Context, store Store, key Key, configDir string) (string, StoreState, error) {
	p, err := restore(ctx, store, key, configDir)
	if err != nil {
		return "", StoreState{}, err
	}
	st, err := LoadStoreState(ctx, store, key)
	if err != nil {
		return "", StoreState{}, err
	}
	return p, st, nil
}

func restore(ctx context.Context, store Store, key Key, configDir string) (string, error) {
	key.Subpath = ""
	if err := key.Validate(); err != nil {
		return "", err
	}
	entries, err := store.Load(ctx, key)
	if err != nil {
		return "", err
	}
	if entries == nil {
		return "", fmt.Errorf("session %s: %w", key.SessionID, ErrNotFound)
	}
	local := NewFileStore(configDir)
	main := local.path(key)
	if err := writeTranscript(main, entries); err != nil {
		return "", err
	}
	subs, err := store.ListSubkeys(ctx, key.ProjectKey, key.SessionID)
	if err != nil {
		return "", err
	}
	for _, sub := range subs {
		if storeOnly(sub) {
			continue
		}
		k := key
		k.Subpath = sub
		if err := k.Validate(); err != nil {
			return "", err
		}
		es, err := store.Load(ctx, k)
		if err != nil {
			return "", err
		}
		if es == nil {
			continue
		}
		if err := writeTranscript(local.path(k), es); err != nil {
			return "", err
		}
	}
	return main, nil
}

// storeOnly reports whether a sub-key holds the store's bookkeeping
// (mirror state, lease), which is neither restored nor imported.
func storeOnly(subpath string) bool {
	return subpath == MirrorStateSubpath || subpath == LeaseSubpath
}

// writeTranscript replaces the file at p with entries.
func writeTranscript(p string, entries []Entry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return writeFileAtomic(p, buf.Bytes())
}

// ImportBatch is how many entries Import appends at a time.
const ImportBatch = 500

// Import copies a local session (and its subagent transcripts) into a
// store, in batches, and returns its key.
func Import(ctx context.Context, store Store, configDir, sessionID string) (Key, error) {
	p, err := Find(configDir, sessionID)
	if err != nil {
		return Key{}, err
	}
	key, err := KeyForPath(configDir, p)
	if err != nil {
		return Key{}, err
	}
	files := []string{p}
	dir := strings.TrimSuffix(p, ".jsonl")
	_ = filepath.WalkDir(dir, func(q string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(q, ".jsonl") {
			files = append(files, q)
		}
		return nil
	})
	for _, f := range files {
		k, err := KeyForPath(configDir, f)
		if err != nil {
			return Key{}, err
		}
		if storeOnly(k.Subpath) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return Key{}, fmt.Errorf("session: %w", err)
		}
		entries, _, err := parseLines(data, f)
		if err != nil {
			return Key{}, err
		}
		for i := 0; i < len(entries); i += ImportBatch {
			if err := store.Append(ctx, k, entries[i:min(i+ImportBatch, len(entries))]); err != nil {
				return Key{}, err
			}
		}
	}
	return key, nil
}

// renew renews the lease every Lease.RenewEvery until ctx is done or the
// lease is lost. Each attempt is bounded by the shorter of the store
// timeout and the renewal period.
func (m *Mirror) renew(ctx context.Context, done chan struct{}) {
	defer close(done)
	l := m.opts.Lease
	every := l.RenewEvery()
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, min(m.opts.Timeout, every))
		err := l.Renew(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			lk := Key{ProjectKey: m.key.ProjectKey, SessionID: m.key.SessionID, Subpath: LeaseSubpath}
			if errors.Is(err, ErrLeaseLost) {
				m.mu.Lock()
				m.leaseErr = err
				m.mu.Unlock()
				m.reportNote(&MirrorError{Key: lk, Attempts: 1,
					Err: fmt.Errorf("renewing the lease: %w; no more entries are copied to the store", err)})
				return
			}
			m.reportNote(&MirrorError{Key: lk, Attempts: 1, Err: fmt.Errorf("renewing the lease (valid until %s): %w",
				l.Expires().UTC().Format(time.RFC3339), err)})
		}
		t.Reset(every)
	}
}

// reportNote hands OnError a failure that lost no entries.
func (m *Mirror) reportNote(e *MirrorError) {
	if m.opts.OnError != nil {
		m.opts.OnError(e)
	}
}

// releaseLease stops the renewal and releases the lease within ctx.
func (m *Mirror) releaseLease(ctx context.Context) {
	if m.opts.Lease == nil {
		return
	}
	m.renewStop()
	select {
	case <-m.renewDone:
	case <-ctx.Done():
		// A renewal is in flight past ctx; it was cancelled and the
		// release below fails on ctx as well: the lease lapses.
	}
	if err := m.opts.Lease.Release(ctx); err != nil {
		m.reportNote(&MirrorError{Key: Key{ProjectKey: m.key.ProjectKey, SessionID: m.key.SessionID,
			Subpath: LeaseSubpath}, Attempts: 1, Err: err})
	}
}
