package conversation_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// stuckStore is a SessionStore whose Append blocks until release is
// closed, whatever its context says, and whose Load waits for its context.
type stuckStore struct {
	session.MemoryStore
	release chan struct{}
}

func (s *stuckStore) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	<-s.release
	return errors.New("released")
}

func (s *stuckStore) Load(ctx context.Context, k session.Key) ([]session.Entry, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// lockedBuffer is a bytes.Buffer safe for the logger's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const storeBound = 200 * time.Millisecond

func stuckStoreOptions(t *testing.T, srv *agentlooptest.Server) (*agentloop.Options, *lockedBuffer) {
	t.Cleanup(conversation.SetMirrorCloseTimeoutForTest(storeBound))
	store := &stuckStore{release: make(chan struct{})}
	t.Cleanup(func() { close(store.release) })
	var log lockedBuffer
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(), Tools: []string{},
		SettingSources: []settings.SettingSource{}, SessionStore: store,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}, &log
}

// runWithin consumes the stream in another goroutine and fails the test if
// it does not end within d.
func runWithin(t *testing.T, d time.Duration, s agentloop.Stream, each func(agentloop.Message)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		var err error
		for m, e := range s {
			if e != nil {
				err = e
				continue
			}
			each(m)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the stream did not end within %v: it waits for the SessionStore", d)
		return nil
	}
}

// A SessionStore that never answers does not hold the stream: every
// message (the result included) reaches the consumer, the stream ends
// within the close bound, and the copies it did not take are reported.
func TestSessionStoreBlockingDoesNotStallStream(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Noted."))
	opts, log := stuckStoreOptions(t, srv)
	var got *agentloop.ResultMessage
	start := time.Now()
	err := runWithin(t, 5*time.Second, agentloop.Query(context.Background(), "Remember this", opts), func(m agentloop.Message) {
		if r, ok := m.(*agentloop.ResultMessage); ok {
			got = r
		}
	})
	elapsed := time.Since(start)
	if err != nil || got == nil || got.IsError {
		t.Fatalf("run with a stuck store: result %+v, err %v", got, err)
	}
	if elapsed > storeBound+2*time.Second {
		t.Errorf("stream ended after %v, want about the %v close bound", elapsed, storeBound)
	}
	l := log.String()
	if !strings.Contains(l, agentloop.DiagSessionStore) || !strings.Contains(l, "context deadline exceeded") {
		t.Errorf("closing with store copies not made was not reported; log:\n%s", l)
	}
	if !strings.Contains(l, "mirror_error") {
		t.Errorf("the batches the store did not take were not reported as mirror_error; log:\n%s", l)
	}
}

// Cancelling the Query's context ends the run promptly even while the
// SessionStore is stuck.
func TestSessionStoreBlockingCancel(t *testing.T) {
	slow := agentlooptest.Text("too late")
	slow.Delay = 30 * time.Second
	srv := agentlooptest.NewTB(t, slow)
	srv.AllowExhausted()
	opts, _ := stuckStoreOptions(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	start := time.Now()
	runWithin(t, 5*time.Second, agentloop.Query(ctx, "Take your time", opts), func(agentloop.Message) {
		once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) })
	})
	if elapsed := time.Since(start); elapsed > storeBound+2*time.Second {
		t.Errorf("cancelled run ended after %v, want about the %v close bound", elapsed, storeBound)
	}
}

// Restoring a session from the SessionStore runs under the Query's
// context: cancelling it ends the Query with an error wrapping
// context.Canceled.
func TestSessionStoreRestoreUsesContext(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	opts, _ := stuckStoreOptions(t, srv)
	opts.Resume = "5a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := runWithin(t, 5*time.Second, agentloop.Query(ctx, "Go on", opts), func(agentloop.Message) {})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("resume with a stuck store and a cancelled context: %v, want DeadlineExceeded", err)
	}
}
