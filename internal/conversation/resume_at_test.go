package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// chainUUIDs returns the uuids of the user and assistant entries of the
// session's main chain, by their first text ("one", "A1", …).
func chainUUIDs(t *testing.T, cfg, id string) map[string]string {
	t.Helper()
	path, err := session.Find(cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range tr.Chain {
		if e.Message == nil || e.IsMeta || len(e.Message.Content) == 0 {
			continue
		}
		out[e.Message.Content[len(e.Message.Content)-1].Text] = e.UUID
	}
	return out
}

// lastTexts is the last text of each message, for comparing histories.
func lastTexts(h []model.Message) []string {
	var out []string
	for _, m := range h {
		out = append(out, m.Content[len(m.Content)-1].Text)
	}
	return out
}

// TestResumeSessionAt: a resume cut at an entry sends the history up to
// it and branches the transcript there; ResumeDropsTurn refuses a cut
// that discards more than the named prompt's turn; an unknown entry is
// an ErrInvalidOption.
func TestResumeSessionAt(t *testing.T) {
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("A1"), agentlooptest.Text("A2"), agentlooptest.Text("A3"),
		agentlooptest.Text("A3 again"), agentlooptest.Text("A2 again"), agentlooptest.Text("forked"))
	base := func() *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
			SettingSources: []settings.SettingSource{}}
	}
	first, err := agentloop.Query(context.Background(), "one", base()).Result()
	if err != nil {
		t.Fatal(err)
	}
	id := first.SessionID
	for _, p := range []string{"two", "three"} {
		o := base()
		o.Resume = id
		if _, err := agentloop.Query(context.Background(), p, o).Result(); err != nil {
			t.Fatal(err)
		}
	}
	u := chainUUIDs(t, cfg, id)
	if len(u) != 6 {
		t.Fatalf("chain = %v", u)
	}

	// Refused: cutting after A1 discards the turns of two and three.
	o := base()
	o.Resume, o.ResumeSessionAt, o.ResumeDropsTurn = id, u["A1"], u["two"]
	msgs, err := agentloop.Query(context.Background(), "retry", o).Collect()
	var re *agentloop.ResultError
	if !errors.As(err, &re) || re.Result.Subtype != "error_during_execution" || len(re.Result.Errors) != 1 ||
		!strings.HasPrefix(re.Result.Errors[0], "Resume rejected by --resume-drops-turn: ") {
		t.Fatalf("refused resume: %v (%d messages)", err, len(msgs))
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want none made by the refused run", n)
	}

	// Unknown entry.
	o = base()
	o.Resume, o.ResumeSessionAt = id, "00000000-0000-4000-8000-000000000000"
	if _, err := agentloop.Query(context.Background(), "x", o).Result(); !errors.Is(err, agentloop.ErrInvalidOption) ||
		!strings.Contains(err.Error(), "00000000-0000-4000-8000-000000000000") {
		t.Errorf("unknown entry: %v", err)
	}

	// Accepted: cutting after A2 discards only the turn of three.
	o = base()
	o.Resume, o.ResumeSessionAt, o.ResumeDropsTurn = id, u["A2"], u["three"]
	if _, err := agentloop.Query(context.Background(), "three again", o).Result(); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[3].Params.Messages
	if d := cmp.Diff([]string{"one", "A1", "two", "A2", "three again"}, lastTexts(h)); d != "" {
		t.Errorf("history after the cut (-want +got):\n%s", d)
	}
	if err := agentlooptest.ValidateHistory(h); err != nil {
		t.Error(err)
	}

	// Without ResumeDropsTurn any cut goes; the transcript keeps every
	// entry, and the new ones branch off the entry cut at.
	o = base()
	o.Resume, o.ResumeSessionAt = id, u["A1"]
	if _, err := agentloop.Query(context.Background(), "two again", o).Result(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"one", "A1", "two again"}, lastTexts(srv.Requests()[4].Params.Messages)); d != "" {
		t.Errorf("history after the cut (-want +got):\n%s", d)
	}
	path, _ := session.Find(cfg, id)
	tr, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var parent string
	kept := 0
	for _, e := range tr.Entries {
		if e.Message != nil && len(e.Message.Content) > 0 {
			switch e.Message.Content[len(e.Message.Content)-1].Text {
			case "two again":
				parent = e.ParentUUID
			case "three", "A3":
				kept++
			}
		}
	}
	if kept != 2 {
		t.Errorf("the file kept %d of the cut entries, want 2", kept)
	}
	if parent != u["A1"] {
		t.Errorf("new prompt's parent = %s, want A1's %s", parent, u["A1"])
	}

	// With ForkSession the fork (whose entries get new uuids) is cut at
	// the copy of the entry, and the original is left alone.
	o = base()
	o.Resume, o.ForkSession, o.ResumeSessionAt = id, true, u["A2"]
	forked, err := agentloop.Query(context.Background(), "fork here", o).Result()
	if err != nil {
		t.Fatal(err)
	}
	if forked.SessionID == id {
		t.Error("the fork kept the original id")
	}
	if d := cmp.Diff([]string{"one", "A1", "two", "A2", "fork here"}, lastTexts(srv.Requests()[5].Params.Messages)); d != "" {
		t.Errorf("forked history (-want +got):\n%s", d)
	}
}
