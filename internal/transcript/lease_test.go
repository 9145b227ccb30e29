package transcript_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/session"
)

// The Recorder owns the lease it is given: the session stays held while it
// records and is free once it closed; without a store it is freed at once.
func TestRecorderOwnsLease(t *testing.T) {
	ctx := context.Background()
	for _, withStore := range []bool{true, false} {
		store := session.NewMemoryStore()
		l, err := session.AcquireLease(ctx, store, key, session.LeaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := transcript.Config{Writer: newWriter(t), Lease: l}
		if withStore {
			cfg.Store, cfg.Key = store, key
		}
		r, err := transcript.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.Record(prompt("hello"))
		_, err = session.AcquireLease(ctx, store, key, session.LeaseOptions{})
		if withStore && !errors.Is(err, session.ErrSessionBusy) {
			t.Errorf("while recording: %v, want ErrSessionBusy", err)
		}
		if !withStore && err != nil {
			t.Errorf("a lease given without a store is still held: %v", err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if withStore {
			if _, err := session.AcquireLease(ctx, store, key, session.LeaseOptions{}); err != nil {
				t.Errorf("after Close: %v", err)
			}
		}
	}
}
