package temporal

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
)

// TestDurableTranscript: with a SessionStore in the worker's Options, a
// durable session's transcript is in the store as the in-process loop
// writes it, across workers (the first stops after the first prompt; the
// second restores the transcript and goes on): the session is listed, and
// an in-process Query resuming it from the store sends the durable turns'
// history.
func TestDurableTranscript(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_g", "Glob", map[string]any{"pattern": "*"}),
		agentlooptest.Text("one"),
		agentlooptest.Text("two"),
		agentlooptest.Text("three, in-process"))
	store := session.NewMemoryStore()
	opts := workerOptions(t, srv)
	opts.SessionStore = store
	opts.ConfigDir = t.TempDir()
	ts := newTestServer(t)
	c := ts.GetDefaultClient()
	ctx := context.Background()
	cwd := t.TempDir()
	w1 := startWorker(t, c, opts)
	s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: cwd, Tools: []string{"Glob"}, AllowedTools: []string{"Glob"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(s.ID(), "agentloop-")
	if _, err := s.Query(ctx, "first").Result(); err != nil {
		t.Fatal(err)
	}
	w1.Stop()
	w2 := startWorker(t, c, opts)
	defer w2.Stop()
	if _, err := s.Query(ctx, "second").Result(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	listed, err := store.List(ctx, session.ProjectKey(cwd))
	if err != nil || len(listed) != 1 || listed[0].SessionID != id {
		t.Fatalf("the store lists %+v (%v), want session %s", listed, err, id)
	}
	p := workerOptions(t, srv).Provider
	res, err := agentloop.Query(ctx, "third", &agentloop.Options{Provider: p, Resume: id, SessionStore: store, Cwd: cwd,
		ConfigDir: t.TempDir(), Tools: []string{"Glob"}, SettingSources: opts.SettingSources}).Result()
	if err != nil {
		t.Fatalf("resuming the durable session in-process: %v", err)
	}
	if res.Result == nil || *res.Result != "three, in-process" {
		t.Fatalf("result %v", res.Result)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Params.Messages
	var texts []string
	for _, m := range last {
		for _, b := range m.Content {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
	}
	got := strings.Join(texts, "|")
	for _, want := range []string{"first", "one", "second", "two", "third"} {
		if !strings.Contains(got, want) {
			t.Errorf("the resumed request lacks %q: %s", want, got)
		}
	}
	if len(last) != 7 {
		t.Errorf("the resumed request has %d messages, want 7 (first, tool_use, result, one, second, two, third)", len(last))
	}
}
