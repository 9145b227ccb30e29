package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// Two hosts (two ConfigDirs) sharing a SessionStore resume the same
// session: while the first host's Client holds it, the second fails with
// ErrSessionBusy and sends nothing; once the first Client closed, the
// second resumes it, with the first host's answers in its history.
func TestSessionStoreLeaseAcrossHosts(t *testing.T) {
	store := session.NewMemoryStore()
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Noted: MANGO."), agentlooptest.Text("Also noted: LIME."),
		agentlooptest.Text("MANGO and LIME."))
	opts := func(configDir, resume string) *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configDir, Tools: []string{},
			SettingSources: []settings.SettingSource{}, SessionStore: store, Resume: resume}
	}
	first, err := agentloop.Query(context.Background(), "Remember MANGO", opts(t.TempDir(), "")).Result()
	if err != nil {
		t.Fatal(err)
	}
	id := first.SessionID

	hostA, err := agentloop.NewClient(opts(t.TempDir(), id))
	if err != nil {
		t.Fatal(err)
	}
	defer hostA.Close()
	if _, err := hostA.Query(context.Background(), "Remember LIME too").Result(); err != nil {
		t.Fatalf("host A resuming: %v", err)
	}

	// The session opens in NewClient or, at the latest, in the first Query.
	err = func() error {
		hostB, err := agentloop.NewClient(opts(t.TempDir(), id))
		if err != nil {
			return err
		}
		defer hostB.Close()
		_, err = hostB.Query(context.Background(), "Which fruits?").Result()
		return err
	}()
	if !errors.Is(err, agentloop.ErrSessionBusy) || !strings.Contains(err.Error(), "ForkSession") {
		t.Fatalf("host B resuming while host A holds the session: %v, want ErrSessionBusy suggesting ForkSession", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests after host B was refused, want 2", n)
	}

	if err := hostA.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := agentloop.Query(context.Background(), "Which fruits?", opts(t.TempDir(), id)).Result()
	if err != nil {
		t.Fatalf("host B resuming after host A closed: %v", err)
	}
	if res.SessionID != id {
		t.Errorf("resumed session %s, want %s", res.SessionID, id)
	}
	h := srv.Requests()[2].Params.Messages
	if len(h) != 5 || h[3].Content[0].Text != "Also noted: LIME." {
		t.Errorf("history after the resume on host B = %+v, want host A's answers", h)
	}
}
