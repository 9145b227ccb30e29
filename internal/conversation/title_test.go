package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// titleLines summarises the system lines of a stream: "init" for
// system/init and "title:<title>" for session_title_changed, each with a
// check that the line's session id is the init's.
func titleLines(t *testing.T, msgs []agentloop.Message) []string {
	t.Helper()
	var out []string
	id := ""
	for _, m := range msgs {
		s, ok := m.(*message.System)
		if !ok {
			continue
		}
		switch s.Subtype {
		case message.SubtypeInit:
			id = s.SessionID
			out = append(out, "init")
		case agentloop.SubtypeSessionTitleChanged:
			var title string
			if err := json.Unmarshal(s.Data["title"], &title); err != nil {
				t.Errorf("title member %s: %v", s.Data["title"], err)
			}
			if s.SessionID != id || s.UUID == "" {
				t.Errorf("title line session_id %q, uuid %q; want the init's id %q and a uuid", s.SessionID, s.UUID, id)
			}
			out = append(out, "title:"+title)
		}
	}
	return out
}

// TestTitle: Options.Title makes the session yield session_title_changed
// once, right after the first system/init (not on the second turn's), and
// write a custom-title entry that session.List reports; a resumed session
// given a new title announces it under the resumed id and List shows the
// new one. With NoSessionPersistence only the line is yielded.
func TestTitle(t *testing.T) {
	cwd, config := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"),
		agentlooptest.Text("four"))
	opts := func() *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
			SettingSources: []settings.SettingSource{}, Title: "Probe title"}
	}
	c, err := agentloop.NewClient(opts())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []agentloop.Message
	for _, p := range []string{"first", "second"} {
		got, err := c.Query(context.Background(), p).Collect()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, got...)
	}
	id := c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"init", "title:Probe title", "init"}, titleLines(t, msgs)); diff != "" {
		t.Errorf("system lines of two turns (-want +got):\n%s", diff)
	}
	listed := func() map[string]string {
		infos, err := session.List(config, cwd, session.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, in := range infos {
			out[in.SessionID] = in.CustomTitle
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{id: "Probe title"}, listed()); diff != "" {
		t.Errorf("session.List titles (-want +got):\n%s", diff)
	}

	o := opts()
	o.Resume, o.Title = id, "Renamed"
	msgs, err = agentloop.Query(context.Background(), "third", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"init", "title:Renamed"}, titleLines(t, msgs)); diff != "" {
		t.Errorf("system lines of the resumed session (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{id: "Renamed"}, listed()); diff != "" {
		t.Errorf("session.List titles after the resume (-want +got):\n%s", diff)
	}

	o = opts()
	o.NoSessionPersistence, o.Title = true, "Unsaved"
	msgs, err = agentloop.Query(context.Background(), "fourth", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"init", "title:Unsaved"}, titleLines(t, msgs)); diff != "" {
		t.Errorf("system lines without persistence (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{id: "Renamed"}, listed()); diff != "" {
		t.Errorf("session.List titles after the unsaved session (-want +got):\n%s", diff)
	}
}
