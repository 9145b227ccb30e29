package main

import (
	"bufio"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/wire"
)

// TestHostLinkAnswerThenEOF: a host that answers a request and closes
// stdin at once has answered; the call gets the answer, not errHostGone.
func TestHostLinkAnswerThenEOF(t *testing.T) {
	for i := range 200 {
		// The request's write is held until the answer and the end of
		// stdin are in, so the call sees both at once.
		w := &heldWriter{release: make(chan struct{})}
		h := newHostLink(&lineOut{w: bufio.NewWriter(w)})
		type got struct {
			raw json.RawMessage
			err error
		}
		done := make(chan got, 1)
		go func() {
			raw, err := h.Call(context.Background(), "hook_callback", map[string]any{"callback_id": "hook_0"})
			done <- got{raw, err}
		}()
		id := pendingID(t, h)
		h.answer(&wire.ControlResponse{RequestID: id, Response: json.RawMessage(`{"continue":true}`)})
		h.close()
		close(w.release)
		if g := <-done; g.err != nil || string(g.raw) != `{"continue":true}` {
			t.Fatalf("try %d: Call = %s, %v; want the answer", i, g.raw, g.err)
		}
	}
}

// pendingID waits for h's one pending call and returns its id.
func pendingID(t *testing.T, h *hostLink) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		h.mu.Lock()
		for k := range h.pending {
			h.mu.Unlock()
			return k
		}
		h.mu.Unlock()
	}
	t.Fatal("no request pending")
	return ""
}

// heldWriter blocks every Write until release is closed.
type heldWriter struct{ release chan struct{} }

func (w *heldWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}
