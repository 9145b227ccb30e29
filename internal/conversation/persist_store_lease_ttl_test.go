package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// SessionStoreLeaseTTL sets how long the session's claim in the store
// holds (what lets another host take a dead host's session over sooner);
// a negative one is an invalid option.
func TestSessionStoreLeaseTTL(t *testing.T) {
	store := session.NewMemoryStore()
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{},
		SettingSources: []settings.SettingSource{}, SessionStore: store, SessionStoreLeaseTTL: 7 * time.Minute}
	res, err := agentloop.Query(context.Background(), "hi", opts).Result()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := store.Load(context.Background(), session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: res.SessionID, Subpath: session.LeaseSubpath})
	if err != nil || len(entries) == 0 {
		t.Fatalf("lease entries: %v %v", entries, err)
	}
	var at, exp time.Time
	json.Unmarshal(entries[0].Extra["at"], &at)
	json.Unmarshal(entries[0].Extra["expiresAt"], &exp)
	if d := exp.Sub(at); d != 7*time.Minute {
		t.Errorf("claim holds %v, want 7m", d)
	}
	opts.SessionStoreLeaseTTL = -time.Second
	if _, err := agentloop.Query(context.Background(), "hi", opts).Result(); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("negative TTL: %v, want ErrInvalidOption", err)
	}
}
