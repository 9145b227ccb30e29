package conversation_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// A session is written to its transcript and resumed by a later Query: the
// history (thinking blocks with their signatures included) is sent again,
// the id is kept and the cost carries on. Forking copies it to a new id,
// the cost carrying on there too.
func TestResumeContinueFork(t *testing.T) {
	cfg := t.TempDir()
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t,
		withUsage(agentlooptest.Thinking("The word is PINEAPPLE.", agentlooptest.Text("I will remember PINEAPPLE.")), 100, 20),
		withUsage(agentlooptest.Text("You asked me to remember PINEAPPLE."), 200, 10),
		withUsage(agentlooptest.Text("Still PINEAPPLE."), 300, 10),
		withUsage(agentlooptest.Text("Forked."), 300, 10))
	base := func() *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
			SettingSources: []settings.SettingSource{}}
	}
	first, err := agentloop.Query(context.Background(), "Remember the word PINEAPPLE", base()).Result()
	if err != nil {
		t.Fatal(err)
	}
	o := base()
	o.Resume = first.SessionID
	second, err := agentloop.Query(context.Background(), "What word did I ask you to remember?", o).Result()
	if err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID {
		t.Errorf("resumed session id %s, want %s", second.SessionID, first.SessionID)
	}
	h := srv.Requests()[1].Params.Messages
	if len(h) != 3 || h[0].Content[0].Text != "Remember the word PINEAPPLE" || h[1].Role != "assistant" ||
		h[2].Content[0].Text != "What word did I ask you to remember?" {
		t.Fatalf("resumed history = %+v", h)
	}
	if th := h[1].Content[0]; th.Type != "thinking" || th.Thinking != "The word is PINEAPPLE." || th.Signature == "" {
		t.Errorf("thinking block after resume = %+v", th)
	}
	firstSig := srv.Requests()[0].Reply.Content[0].Signature
	if h[1].Content[0].Signature != firstSig {
		t.Errorf("signature %q after resume, want %q", h[1].Content[0].Signature, firstSig)
	}
	if want := first.TotalCostUSD + 200*4/1e6 + 10*20/1e6; math.Abs(second.TotalCostUSD-want) > 1e-12 {
		t.Errorf("cost after resume = %v, want %v (carried on)", second.TotalCostUSD, want)
	}

	o = base()
	o.Continue = true
	third, err := agentloop.Query(context.Background(), "And now?", o).Result()
	if err != nil || third.SessionID != first.SessionID || len(srv.Requests()[2].Params.Messages) != 5 {
		t.Errorf("continue: %v, id %s, %d messages", err, third.SessionID, len(srv.Requests()[2].Params.Messages))
	}

	o = base()
	o.Resume, o.ForkSession = first.SessionID, true
	forked, err := agentloop.Query(context.Background(), "Fork it", o).Result()
	if err != nil || forked.SessionID == first.SessionID || len(srv.Requests()[3].Params.Messages) != 7 {
		t.Errorf("fork: %v, id %s, %d messages", err, forked.SessionID, len(srv.Requests()[3].Params.Messages))
	}
	// As the reference's --fork-session does (testdata/conformance/t_fork),
	// the fork carries the original's totals on.
	if want := third.TotalCostUSD + 300*4/1e6 + 10*20/1e6; math.Abs(forked.TotalCostUSD-want) > 1e-12 {
		t.Errorf("cost after fork = %v, want %v (carried on)", forked.TotalCostUSD, want)
	}

	o = base()
	o.Resume = "7b6c2f55-0000-4000-8000-000000000000"
	if _, err := agentloop.Query(context.Background(), "x", o).Result(); !errors.Is(err, agentloop.ErrSessionNotFound) {
		t.Errorf("resuming an unknown session: %v", err)
	}
}

// With a shared SessionStore, a session written on one host resumes on
// another that has no local copy.
func TestSessionStoreAcrossHosts(t *testing.T) {
	store := &session.MemoryStore{}
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Noted: PINEAPPLE."), agentlooptest.Text("It was PINEAPPLE."))
	hostA := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{},
		SettingSources: []settings.SettingSource{}, SessionStore: store}
	first, err := agentloop.Query(context.Background(), "Remember PINEAPPLE", hostA).Result()
	if err != nil {
		t.Fatal(err)
	}
	hostB := *hostA
	hostB.ConfigDir = t.TempDir()
	hostB.Resume = first.SessionID
	if _, err := agentloop.Query(context.Background(), "Which word?", &hostB).Result(); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[1].Params.Messages
	if len(h) != 3 || h[1].Content[0].Text != "Noted: PINEAPPLE." {
		t.Errorf("history on host B = %+v", h)
	}
}
