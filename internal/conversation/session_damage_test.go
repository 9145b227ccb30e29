package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// damagedSession is a transcript of two turns, one line per element.
func damagedSession(id string) []string {
	line := func(uuid, parent, typ, msg string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"message":%s,"uuid":%q,"timestamp":"2026-03-02T09:00:00.000Z","sessionId":%q,"userType":"external","version":"test"}`,
			p, typ, msg, uuid, id)
	}
	reply := func(id, text string) string {
		return fmt.Sprintf(`{"id":%q,"type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`, id, text)
	}
	return []string{
		line("c1", "", "user", `{"role":"user","content":"Remember KIWI"}`),
		line("c2", "c1", "assistant", reply("msg_1", "I will remember KIWI.")),
		line("c3", "c2", "user", `{"role":"user","content":"And MANGO"}`),
		line("c4", "c3", "assistant", reply("msg_2", "Noted MANGO.")),
	}
}

// texts flattens a history to "role: text" for each text block.
func texts(h []model.Message) []string {
	var out []string
	for _, m := range h {
		for _, c := range m.Content {
			if c.Type == model.TypeText {
				out = append(out, m.Role+": "+c.Text)
			}
		}
	}
	return out
}

// A transcript with a damaged line still resumes (and continues): the
// damaged line is skipped, every good entry reaches the first request, and
// the stream says which line was skipped and why. An empty transcript is
// an error, not a fresh session.
func TestResumeDamagedTranscript(t *testing.T) {
	const id = "77777777-7777-4777-8777-777777777777"
	full := []string{"user: Remember KIWI", "assistant: I will remember KIWI.", "user: And MANGO",
		"assistant: Noted MANGO.", "user: Which fruits?"}
	tests := []struct {
		name      string
		damage    func(ls []string) []string
		continue_ bool
		history   []string
		warning   string // in the transcript diagnostic; "" for none
	}{
		{"garbage line in the middle", func(ls []string) []string {
			return append(ls[:2:2], append([]string{"this is not JSON"}, ls[2:]...)...)
		}, false, full, ":3: skipped a malformed line: not valid JSON"},
		{"garbage line, continued", func(ls []string) []string {
			return append(ls[:2:2], append([]string{"this is not JSON"}, ls[2:]...)...)
		}, true, full, ":3: skipped a malformed line: not valid JSON"},
		{"message of the wrong shape", func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"message":{`, `"message":"I will remember KIWI.","x":{`, 1)
			return ls
		}, false, []string{"user: Remember KIWI", "user: And MANGO", "assistant: Noted MANGO.", "user: Which fruits?"},
			":2: skipped a malformed line: assistant message: expected an object, found a string"},
		{"content block of the wrong shape", func(ls []string) []string {
			ls[3] = strings.Replace(ls[3], `"text":"Noted MANGO."`, `"text":["Noted MANGO."]`, 1)
			return ls
		}, false, []string{"user: Remember KIWI", "assistant: I will remember KIWI.", "user: And MANGO", "user: Which fruits?"},
			`:4: skipped a malformed line: assistant message: content: content block: field "text": expected a string, found a list`},
		{"unknown entry type with a broken message", func(ls []string) []string {
			return append(ls, `{"type":"some-future-entry","message":"not an object","uuid":"z1"}`)
		}, false, full, ""},
		{"truncated last line", func(ls []string) []string {
			return append(ls, `{"parentUuid":"c4","isSidechain":false,"type":"user","message":{"role":"us`)
		}, false, full, ":5: skipped the final line: it is cut short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, cwd := t.TempDir(), t.TempDir()
			p := session.Path(cfg, cwd, id)
			ls := tc.damage(damagedSession(id))
			data := strings.Join(ls, "\n")
			if !strings.HasSuffix(tc.name, "truncated last line") {
				data += "\n"
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("KIWI and MANGO."))
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
				SettingSources: []settings.SettingSource{}}
			if tc.continue_ {
				o.Continue = true
			} else {
				o.Resume = id
			}
			var diags []agentloop.Diagnostic
			var res *agentloop.ResultMessage
			for m, err := range agentloop.Query(context.Background(), "Which fruits?", o) {
				if err != nil {
					t.Fatal(err)
				}
				if d, ok := agentloop.DiagnosticOf(m); ok {
					diags = append(diags, d)
				}
				if r, ok := m.(*agentloop.ResultMessage); ok {
					res = r
				}
			}
			if res == nil || res.SessionID != id {
				t.Fatalf("result %+v, want the session %s resumed", res, id)
			}
			if d := cmp.Diff(tc.history, texts(srv.Requests()[0].Params.Messages)); d != "" {
				t.Errorf("history sent (-want +got):\n%s", d)
			}
			var got []string
			for _, d := range diags {
				if d.Tag == agentloop.DiagTranscript {
					got = append(got, d.Text)
				}
			}
			switch {
			case tc.warning == "" && len(got) > 0:
				t.Errorf("transcript diagnostics %q, want none", got)
			case tc.warning != "" && (len(got) != 1 || !strings.Contains(got[0], p+tc.warning)):
				t.Errorf("transcript diagnostics %q, want one with %q", got, p+tc.warning)
			}
			// The next resume reads the same good entries plus this turn.
			tr, err := session.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if h := texts(tr.History()); len(h) != len(tc.history)+1 {
				t.Errorf("after the turn the transcript's history is %q", h)
			}
		})
	}
}

// Resuming an empty transcript fails clearly instead of starting afresh.
func TestResumeEmptyTranscript(t *testing.T) {
	const id = "88888888-8888-4888-8888-888888888888"
	cfg, cwd := t.TempDir(), t.TempDir()
	p := session.Path(cfg, cwd, id)
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t)
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
		SettingSources: []settings.SettingSource{}, Resume: id}
	_, err := agentloop.Query(context.Background(), "hello", o).Result()
	if !errors.Is(err, session.ErrEmptyTranscript) || !strings.Contains(err.Error(), id) {
		t.Errorf("resuming an empty transcript: %v, want ErrEmptyTranscript naming the session", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// Resuming a session that another writer holds fails with ErrSessionBusy,
// and leaves its transcript alone.
func TestResumeBusySession(t *testing.T) {
	const id = "99999999-9999-4999-8999-999999999999"
	cfg, cwd := t.TempDir(), t.TempDir()
	p := session.Path(cfg, cwd, id)
	os.MkdirAll(filepath.Dir(p), 0o700)
	data := strings.Join(damagedSession(id), "\n") + "\n"
	os.WriteFile(p, []byte(data), 0o600)
	w, err := session.Open(p, session.Envelope{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	srv := agentlooptest.NewTB(t)
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
		SettingSources: []settings.SettingSource{}, Resume: id}
	_, err = agentloop.Query(context.Background(), "hello", o).Result()
	if !errors.Is(err, agentloop.ErrSessionBusy) || !strings.Contains(err.Error(), "ForkSession") {
		t.Errorf("resuming a busy session: %v, want ErrSessionBusy suggesting ForkSession", err)
	}
	if after, _ := os.ReadFile(p); string(after) != data {
		t.Errorf("the busy session's transcript changed")
	}
}
