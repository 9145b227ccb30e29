package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// slowStore is a store whose every append takes delay: a remote store
// under load.
type slowStore struct {
	session.Store
	delay time.Duration
}

func (s slowStore) Append(ctx context.Context, key session.Key, entries []session.Entry) error {
	time.Sleep(s.delay)
	return s.Store.Append(ctx, key, entries)
}

// TestPromptStoredBeforeModelCall: with a session store, a prompt is in
// the store before the model is asked, however slow the store, so a host
// that dies during the turn leaves the prompt to the host that takes the
// session over (serve's takeover). Each model request checks the store
// at the moment it arrives.
func TestPromptStoredBeforeModelCall(t *testing.T) {
	mem := session.NewMemoryStore()
	store := slowStore{Store: mem, delay: 300 * time.Millisecond}
	cwd, configDir := t.TempDir(), t.TempDir()
	key := session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: behindID}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("First."), agentlooptest.Text("Second."))
	var checked, missing atomic.Int32
	want := []string{"PROMPT-ONE", "PROMPT-TWO"}
	srv.Route(func(r *agentlooptest.Request) bool {
		n := checked.Add(1)
		es, err := mem.Load(context.Background(), key)
		b, _ := json.Marshal(es)
		if err != nil || !strings.Contains(string(b), want[min(int(n), 2)-1]) {
			missing.Add(1)
		}
		return false // answered by the queue
	})
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configDir,
		Tools: []string{}, PermissionMode: agentloop.PermissionBypass, SettingSources: []settings.SettingSource{},
		SessionStore: store, SessionID: behindID})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range want {
		if _, err := c.Query(t.Context(), p).Collect(); err != nil {
			t.Fatal(err)
		}
	}
	if checked.Load() != 2 || missing.Load() != 0 {
		t.Errorf("%d model requests, %d of them sent before the store had their prompt", checked.Load(), missing.Load())
	}
}
