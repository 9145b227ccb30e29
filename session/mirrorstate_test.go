package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
)

// mainFails rejects appends to main transcripts while fail is set; the
// mirror-state sub-key still works.
type mainFails struct {
	session.Store
	fail atomic.Bool
}

func (s *mainFails) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	if s.fail.Load() && k.Subpath == "" {
		return errors.New("refused")
	}
	return s.Store.Append(ctx, k, es)
}

// A Mirror with TrackState records in the store whether its copy is
// complete, and RestoreChecked reports it.
func TestMirrorTrackState(t *testing.T) {
	tests := []struct {
		name  string
		track bool
		// run appends and closes; it returns the store to restore from.
		run  func(t *testing.T, m *session.Mirror, s *mainFails)
		want session.StoreState
	}{
		{"complete", true, func(t *testing.T, m *session.Mirror, s *mainFails) {
			m.Append(session.PromptEntry("", "one", "default"))
			m.Close(context.Background())
		}, session.StoreState{Writers: 1}},
		{"a batch refused", true, func(t *testing.T, m *session.Mirror, s *mainFails) {
			m.Append(session.PromptEntry("", "one", "default"))
			m.Flush(context.Background())
			s.fail.Store(true)
			m.Append(session.PromptEntry("", "two", "default"), session.LastPromptEntry("two", ""))
			m.Close(context.Background())
		}, session.StoreState{Writers: 1, Lost: 2}},
		{"closed before the store caught up", true, func(t *testing.T, m *session.Mirror, s *mainFails) {
			m.Append(session.PromptEntry("", "one", "default"))
			m.Flush(context.Background())
			s.fail.Store(true)
			m.Append(session.PromptEntry("", "two", "default"))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			m.Close(ctx)
		}, session.StoreState{Writers: 1, Unclosed: 1}},
		{"not tracked", false, func(t *testing.T, m *session.Mirror, s *mainFails) {
			m.Append(session.PromptEntry("", "one", "default"))
			m.Flush(context.Background())
			s.fail.Store(true)
			m.Append(session.PromptEntry("", "two", "default"))
			m.Close(context.Background())
		}, session.StoreState{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &mainFails{Store: session.NewMemoryStore()}
			var sl sleeps
			m, _ := newMirror(t, store, session.MirrorOptions{TrackState: tc.track, Sleep: sl.sleep})
			tc.run(t, m, store)
			store.fail.Store(false)
			hostB := t.TempDir()
			p, got, err := session.RestoreChecked(context.Background(), store, m.Key(), hostB)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("store state (-want +got):\n%s", diff)
			}
			if got.Behind() != (tc.want.Lost > 0 || tc.want.Unclosed > 0) {
				t.Errorf("Behind() = %v for %+v", got.Behind(), got)
			}
			// The state records stay in the store.
			dir := filepath.Join(filepath.Dir(p), m.Key().SessionID)
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("restore wrote %s (the mirror state) locally: %v", dir, err)
			}
		})
	}
}
