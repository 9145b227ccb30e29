package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/storetest"
	"github.com/google/go-cmp/cmp"
)

// sameStore is the second instance of a store with no backend to share.
func sameStore(_ *testing.T, s session.Store) session.Store { return s }

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store { return session.NewMemoryStore() }, sameStore)
}

func TestMemoryStoreZeroValue(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store { return &session.MemoryStore{} }, sameStore)
}

func TestFileStore(t *testing.T) {
	dirs := map[session.Store]string{}
	storetest.Run(t, func(t *testing.T) session.Store {
		dir := t.TempDir()
		s := session.NewFileStore(dir)
		dirs[s] = dir
		return s
	}, func(t *testing.T, s session.Store) session.Store { return session.NewFileStore(dirs[s]) })
}

// TestFileStoreLayout checks that a FileStore's files are transcripts in
// the local layout, readable by Load.
func TestFileStoreLayout(t *testing.T) {
	dir := t.TempDir()
	s := session.NewFileStore(dir)
	k := session.Key{ProjectKey: "-home-user-proj", SessionID: "0b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"}
	es := storetest.Conversation("eeeeeeee")
	if err := s.Append(context.Background(), k, es); err != nil {
		t.Fatal(err)
	}
	tr, err := session.Load(filepath.Join(dir, "projects", k.ProjectKey, k.SessionID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(es, tr.Entries, storetest.Equal); diff != "" {
		t.Errorf("file written by the store (-appended +read):\n%s", diff)
	}
	// A second store on the same directory knows the uuids already there.
	s2 := session.NewFileStore(dir)
	if err := s2.Append(context.Background(), k, es[1:3]); err != nil {
		t.Fatal(err)
	}
	got, _ := s2.Load(context.Background(), k)
	if len(got) != len(es) {
		t.Errorf("a second store appended entries already there: %d, want %d", len(got), len(es))
	}
}

// flakyStore fails the first failures appends, and can block.
type flakyStore struct {
	session.Store
	mu       sync.Mutex
	failures int
	calls    int
	block    chan struct{} // if set, Append waits for it (or ctx)
}

func (f *flakyStore) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.failures
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		return errors.New("store unavailable")
	}
	return f.Store.Append(ctx, k, es)
}

func (f *flakyStore) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

const sid = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

func newMirror(t *testing.T, store session.Store, opts session.MirrorOptions) (*session.Mirror, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "projects", "-w", sid+".jsonl")
	w, err := session.Create(p, session.Envelope{SessionID: sid, Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return session.NewMirror(w, store, session.Key{ProjectKey: "-w", SessionID: sid}, opts), p
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestMirror(t *testing.T) {
	tests := []struct {
		name       string
		failures   int
		wantCalls  int
		wantSleeps []time.Duration
		wantErr    bool
	}{
		{"stored first time", 0, 1, nil, false},
		{"stored on the third attempt", 2, 3, []time.Duration{200 * time.Millisecond, 800 * time.Millisecond}, false},
		{"dropped after three attempts", 5, 3, []time.Duration{200 * time.Millisecond, 800 * time.Millisecond}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := session.NewMemoryStore()
			store := &flakyStore{Store: mem, failures: tc.failures}
			var sl sleeps
			var mu sync.Mutex
			var reported []*session.MirrorError
			m, p := newMirror(t, store, session.MirrorOptions{
				Sleep:   sl.sleep,
				OnError: func(e *session.MirrorError) { mu.Lock(); reported = append(reported, e); mu.Unlock() },
			})
			batch := []session.Entry{session.PromptEntry("", "hello", "default"), session.LastPromptEntry("hello", "")}
			if err := m.Append(batch...); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if store.Calls() != tc.wantCalls {
				t.Errorf("%d store appends, want %d", store.Calls(), tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantSleeps, sl.d); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			local, err := session.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := mem.Load(context.Background(), m.Key())
			if tc.wantErr {
				if len(reported) != 1 || reported[0].Attempts != 3 || len(reported[0].Entries) != 2 || reported[0].Key != m.Key() {
					t.Fatalf("reported = %+v, want one failure of 2 entries after 3 attempts", reported)
				}
				if diff := cmp.Diff(local.Entries, reported[0].Entries, storetest.Equal); diff != "" {
					t.Errorf("reported batch (-local +reported):\n%s", diff)
				}
				if stored != nil {
					t.Errorf("store holds %d entries of a dropped batch", len(stored))
				}
				return
			}
			if len(reported) != 0 {
				t.Errorf("reported %v", reported)
			}
			// The store holds what was written locally, filled in.
			if diff := cmp.Diff(local.Entries, stored, storetest.Equal); diff != "" {
				t.Errorf("stored (-local +store):\n%s", diff)
			}
		})
	}
}

func TestMirrorOrderAfterFailure(t *testing.T) {
	mem := session.NewMemoryStore()
	store := &flakyStore{Store: mem, failures: 3}
	var sl sleeps
	var failed int
	m, p := newMirror(t, store, session.MirrorOptions{Sleep: sl.sleep, OnError: func(*session.MirrorError) { failed++ }})
	for _, s := range []string{"one", "two", "three"} {
		if err := m.Append(session.PromptEntry("", s, "default")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	if failed != 1 {
		t.Errorf("%d batches reported, want 1", failed)
	}
	local, _ := session.Load(p)
	stored, _ := mem.Load(context.Background(), m.Key())
	if diff := cmp.Diff(local.Entries[1:], stored, storetest.Equal); diff != "" {
		t.Errorf("stored after the first batch was dropped (-want +got):\n%s", diff)
	}
}

func TestMirrorDoesNotBlock(t *testing.T) {
	mem := session.NewMemoryStore()
	store := &flakyStore{Store: mem, block: make(chan struct{})}
	m, _ := newMirror(t, store, session.MirrorOptions{})
	done := make(chan error)
	go func() { done <- m.Append(session.PromptEntry("", "hi", "default")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Append waited for the store")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := m.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with the store blocked = %v, want DeadlineExceeded", err)
	}
	close(store.block)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if es, _ := mem.Load(context.Background(), m.Key()); len(es) != 1 {
		t.Errorf("store holds %d entries, want 1", len(es))
	}
}

func TestMirrorTimeoutNotRetried(t *testing.T) {
	store := &flakyStore{Store: session.NewMemoryStore(), block: make(chan struct{})}
	var sl sleeps
	errs := make(chan *session.MirrorError, 1)
	m, _ := newMirror(t, store, session.MirrorOptions{Sleep: sl.sleep, Timeout: 10 * time.Millisecond,
		OnError: func(e *session.MirrorError) { errs <- e }})
	m.Append(session.PromptEntry("", "hi", "default"))
	m.Close(context.Background())
	e := <-errs
	if e.Attempts != 1 || !errors.Is(e, context.DeadlineExceeded) || store.Calls() != 1 || len(sl.d) != 0 {
		t.Errorf("timed-out append: %v after %d attempts, %d calls, sleeps %v", e, e.Attempts, store.Calls(), sl.d)
	}
}

func TestMirrorLocalFailure(t *testing.T) {
	store := &flakyStore{Store: session.NewMemoryStore()}
	m, _ := newMirror(t, store, session.MirrorOptions{})
	m.Writer().Close()
	if err := m.Append(session.PromptEntry("", "hi", "default")); err == nil {
		t.Error("Append with a closed writer succeeded")
	}
	m.Close(context.Background())
	if store.Calls() != 0 {
		t.Errorf("a batch that failed locally went to the store")
	}
}

// TestRestore moves a session to another host through a store and
// resumes it there.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	hostA, hostB, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	store := session.NewMemoryStore()
	key := session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: sid}

	p := session.Path(hostA, cwd, sid)
	w, err := session.Create(p, session.Envelope{SessionID: sid, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	m := session.NewMirror(w, store, key, session.MirrorOptions{})
	m.Append(session.PromptEntry("", "Remember KIWI", "default"))
	m.Append(session.AssistantEntry(assistant("msg_1", "Remembered.")), session.CostStateEntry(session.CostState{TotalCostUSD: 0.25}))
	sub := session.SubagentPath(p, "ag1")
	sw, _ := session.Create(sub, session.Envelope{SessionID: sid, AgentID: "ag1", IsSidechain: true})
	subKey, err := session.KeyForPath(hostA, sub)
	if err != nil {
		t.Fatal(err)
	}
	sm := session.NewMirror(sw, store, subKey, session.MirrorOptions{})
	sm.Append(session.PromptEntry("", "sub task", ""))
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sm.Close(ctx)

	restored, err := session.Restore(ctx, store, key, hostB)
	if err != nil {
		t.Fatal(err)
	}
	found, err := session.Find(hostB, sid)
	if err != nil || found != restored || found != session.Path(hostB, cwd, sid) {
		t.Fatalf("Find on host B = %s, %v; Restore returned %s", found, err, restored)
	}
	a, _ := session.Load(p)
	b, err := session.Load(found)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.History(), b.History(), storetest.Equal); diff != "" {
		t.Errorf("history on host B (-A +B):\n%s", diff)
	}
	if b.Cost == nil || b.Cost.TotalCostUSD != 0.25 {
		t.Errorf("cost on host B = %+v", b.Cost)
	}
	if ids, _ := session.ListSubagents(found); len(ids) != 1 || ids[0] != "ag1" {
		t.Errorf("subagents on host B = %v", ids)
	}
	// Resume on host B continues the chain.
	wb, err := session.Open(found, session.Envelope{SessionID: sid, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if wb.Leaf() != a.Leaf {
		t.Errorf("leaf on host B = %s, want %s", wb.Leaf(), a.Leaf)
	}
	wb.Close()

	if _, err := session.Restore(ctx, store, session.Key{ProjectKey: "-x", SessionID: sid}, hostB); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Restore of a session the store lacks = %v, want ErrNotFound", err)
	}
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	config, cwd := t.TempDir(), t.TempDir()
	p := session.Path(config, cwd, sid)
	w, _ := session.Create(p, session.Envelope{SessionID: sid, Cwd: cwd})
	var es []session.Entry
	for range 1203 {
		es = append(es, session.PromptEntry("", "x", "default"))
	}
	w.Append(es...)
	w.Close()
	sw, _ := session.Create(session.SubagentPath(p, "s1"), session.Envelope{SessionID: sid, IsSidechain: true})
	sw.Append(session.PromptEntry("", "sub", ""))
	sw.Close()

	store := session.NewMemoryStore()
	key, err := session.Import(ctx, store, config, sid)
	if err != nil {
		t.Fatal(err)
	}
	if key != (session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: sid}) {
		t.Errorf("key = %+v", key)
	}
	local, _ := session.Load(p)
	stored, _ := store.Load(ctx, key)
	if diff := cmp.Diff(local.Entries, stored, storetest.Equal); diff != "" {
		t.Errorf("imported (-local +store):\n%s", diff)
	}
	subs, _ := store.ListSubkeys(ctx, key.ProjectKey, sid)
	if diff := cmp.Diff([]string{"subagents/agent-s1"}, subs); diff != "" {
		t.Errorf("subkeys (-want +got):\n%s", diff)
	}
	// Importing again adds nothing: uuids are idempotency keys.
	session.Import(ctx, store, config, sid)
	if again, _ := store.Load(ctx, key); len(again) != len(stored) {
		t.Errorf("second import: %d entries, want %d", len(again), len(stored))
	}
	os.Remove(p)
}

func assistant(id, text string) *message.Assistant {
	return &message.Assistant{Message: message.APIMessage{ID: id, Type: "message", Role: "assistant", Model: "claude-x",
		Content: []model.Content{model.TextBlock(text)}}}
}

func TestMain(m *testing.M) {
	os.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "")
	os.Exit(m.Run())
}

// A store call that never returns (it ignores its context) does not hold
// Close past its context: the copies are reported lost and Close returns
// an error wrapping the context's.
func TestMirrorCloseBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	store := &stuckStore{Store: session.NewMemoryStore(), release: release}
	var mu sync.Mutex
	var reported []*session.MirrorError
	m, _ := newMirror(t, store, session.MirrorOptions{OnError: func(e *session.MirrorError) {
		mu.Lock()
		reported = append(reported, e)
		mu.Unlock()
	}})
	for i := range 3 {
		if err := m.Append(session.PromptEntry("", fmt.Sprint("p", i), "default")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := m.Close(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v with a stuck store, want about 50ms", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a stuck store = %v, want DeadlineExceeded", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 {
		t.Errorf("%d batches reported when closing, want the 2 still queued", len(reported))
	}
}

// stuckStore's Append blocks until release is closed, whatever its ctx.
type stuckStore struct {
	session.Store
	release chan struct{}
}

func (s *stuckStore) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	<-s.release
	return errors.New("released")
}
