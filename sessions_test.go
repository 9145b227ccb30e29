package agentloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session"
)

// TestSessionsBadInput: the session readers name what was wrong.
func TestSessionsBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := agentloop.ListSessions(ctx, t.TempDir(), &agentloop.ListSessionsOptions{Limit: -1}); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("negative limit: %v", err)
	}
	l, err := agentloop.ListSessions(ctx, t.TempDir(), &agentloop.ListSessionsOptions{ConfigDir: t.TempDir()})
	if err != nil || len(l) != 0 {
		t.Errorf("empty directory: %v, %v", l, err)
	}
	_, err = agentloop.SessionMessages(ctx, "00000000-0000-0000-0000-000000000000", &agentloop.SessionMessagesOptions{ConfigDir: t.TempDir()})
	if !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := agentloop.SessionMessages(ctx, "../etc", nil); err == nil {
		t.Error("an invalid id was accepted")
	}
}
