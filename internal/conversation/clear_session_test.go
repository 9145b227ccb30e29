package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
)

// sessionHookLog records SessionStart and SessionEnd hooks with the
// session id each saw.
type sessionHookLog struct {
	mu     sync.Mutex
	events []string // "start:<source>:<id>", "end:<reason>:<id>"
	ctx    map[string]string
}

func (l *sessionHookLog) matchers() map[hooks.Event][]hooks.Matcher {
	return map[hooks.Event][]hooks.Matcher{
		hooks.SessionStart: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			v := in.(hooks.SessionStartInput)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.events = append(l.events, "start:"+v.Source+":"+v.SessionID)
			if c := l.ctx[v.Source]; c != "" {
				return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{AdditionalContext: c}}, nil
			}
			return hooks.Output{}, nil
		}}}},
		hooks.SessionEnd: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			v := in.(hooks.SessionEndInput)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.events = append(l.events, "end:"+v.Reason+":"+v.SessionID)
			return hooks.Output{}, nil
		}}}},
	}
}

func (l *sessionHookLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// resetOf returns the conversation_reset messages of msgs.
func resetOf(msgs []agentloop.Message) []*agentloop.ConversationResetMessage {
	var out []*agentloop.ConversationResetMessage
	for _, m := range msgs {
		if r, ok := m.(*agentloop.ConversationResetMessage); ok {
			out = append(out, r)
		}
	}
	return out
}

// sessionIDOf is the session_id a message carries ("" for none).
func sessionIDOf(t *testing.T, m agentloop.Message) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal(b, &v)
	return v.SessionID
}

// TestClearStartsNewSession: /clear through a Client ends the conversation
// (SessionEnd with the old id), announces the new one with
// conversation_reset, and from there every message, hook input and
// Client.SessionID carry the new id; SessionStart (source clear) adds its
// context to the next prompt; the transcript of each id holds its own
// conversation, so resuming either gives it back.
func TestClearStartsNewSession(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Old answer."), agentlooptest.Text("New answer."))
	opts := compactOptions(t, srv, cwd, configDir, 0)
	log := &sessionHookLog{ctx: map[string]string{"clear": "CTX-AFTER-CLEAR"}}
	opts.Hooks = log.matchers()
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old := c.SessionID()
	first, err := c.Query(ctx, "OLD question").Result()
	if err != nil {
		t.Fatal(err)
	}
	if first.SessionID != old {
		t.Fatalf("first result session %s, want %s", first.SessionID, old)
	}
	msgs, err := c.Query(ctx, "/clear").Collect()
	if err != nil {
		t.Fatal(err)
	}
	resets := resetOf(msgs)
	if len(resets) != 1 {
		t.Fatalf("%d conversation_reset messages, want 1", len(resets))
	}
	r := resets[0]
	nid := r.NewConversationID
	if nid == "" || nid == old || r.SessionID != old || r.Trigger != "clear" || r.UUID == "" {
		t.Errorf("conversation_reset %+v (old id %s)", r, old)
	}
	after := false
	for _, m := range msgs {
		if m == agentloop.Message(r) {
			after = true
			continue
		}
		if id := sessionIDOf(t, m); after && id != nid {
			t.Errorf("%s message after the reset carries session %s, want %s", m.Kind(), id, nid)
		}
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.SessionID != nid || res.TotalCostUSD != 0 {
		t.Errorf("/clear result: session %s cost %v", res.SessionID, res.TotalCostUSD)
	}
	if got := c.SessionID(); got != nid {
		t.Errorf("Client.SessionID after /clear = %s, want %s", got, nid)
	}
	next, err := c.Query(ctx, "NEW question").Result()
	if err != nil {
		t.Fatal(err)
	}
	if next.SessionID != nid {
		t.Errorf("result after /clear carries session %s, want %s", next.SessionID, nid)
	}
	if text := allUserText(srv.LastRequest()); strings.Contains(text, "OLD question") || !strings.Contains(text, "CTX-AFTER-CLEAR") {
		t.Errorf("the request after /clear: %.300s", text)
	}
	c.Close()
	want := []string{"start:startup:" + old, "end:clear:" + old, "start:clear:" + nid, "end:prompt_input_exit:" + nid}
	if got := log.list(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("session hooks\n got %v\nwant %v", got, want)
	}
	// Each id resumes its own conversation.
	for _, tc := range []struct{ id, has, lacks string }{{old, "OLD question", "NEW question"}, {nid, "NEW question", "OLD question"}} {
		srv.Push(agentlooptest.Text("Resumed."))
		o := compactOptions(t, srv, cwd, configDir, 0)
		o.Resume = tc.id
		res, err := agentloop.Query(ctx, "Go on.", o).Result()
		if err != nil {
			t.Fatalf("resume %s: %v", tc.id, err)
		}
		text := allUserText(srv.LastRequest())
		if res.SessionID != tc.id || !strings.Contains(text, tc.has) || strings.Contains(text, tc.lacks) {
			t.Errorf("resume %s (session %s): %.300s", tc.id, res.SessionID, text)
		}
	}
}

// TestClearAliasesViaQuery: /reset and /new are /clear, through the
// one-shot Query as well.
func TestClearAliasesViaQuery(t *testing.T) {
	for _, p := range []string{"/clear", "/reset", "/new"} {
		t.Run(p, func(t *testing.T) {
			cwd, configDir := compactSetup(t)
			srv := agentlooptest.NewTB(t)
			msgs, err := agentloop.Query(context.Background(), p, compactOptions(t, srv, cwd, configDir, 0)).Collect()
			if err != nil {
				t.Fatal(err)
			}
			init := msgs[0].(*agentloop.SystemMessage)
			resets := resetOf(msgs)
			res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			if len(resets) != 1 || resets[0].SessionID != init.SessionID || res.SessionID != resets[0].NewConversationID ||
				res.SessionID == init.SessionID {
				t.Errorf("init %s, resets %v, result %s", init.SessionID, resets, res.SessionID)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("%s sent %d requests", p, len(srv.Requests()))
			}
		})
	}
}

// TestConversationResetJSON: the line's shape, and Decode reads it back.
func TestConversationResetJSON(t *testing.T) {
	m := &message.ConversationReset{NewConversationID: "new-id", Trigger: "clear", SessionID: "old-id", UUID: "u1"}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"conversation_reset","new_conversation_id":"new-id","trigger":"clear","session_id":"old-id","uuid":"u1"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	back, err := message.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := back.(*message.ConversationReset); !ok || *r != *m {
		t.Errorf("decoded %#v", back)
	}
}

// TestClearWithSessionStore: with a SessionStore, the conversation after
// /clear is mirrored under the new id's key, the one before stays under
// the old key.
func TestClearWithSessionStore(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Old answer."), agentlooptest.Text("New answer."))
	opts := compactOptions(t, srv, cwd, configDir, 0)
	store := sessions.NewMemoryStore()
	opts.SessionStore = store
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	for _, p := range []string{"OLD-STORED", "/clear", "NEW-STORED"} {
		if _, err := c.Query(context.Background(), p).Result(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	nid := c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	text := func(id string) string {
		entries, err := store.Load(context.Background(), sessions.Key{ProjectKey: sessions.ProjectKey(cwd), SessionID: id})
		if err != nil {
			t.Fatalf("store load %s: %v", id, err)
		}
		b, _ := json.Marshal(entries)
		return string(b)
	}
	if o := text(old); !strings.Contains(o, "OLD-STORED") || strings.Contains(o, "NEW-STORED") {
		t.Errorf("old key holds %.300s", o)
	}
	if n := text(nid); !strings.Contains(n, "NEW-STORED") || strings.Contains(n, "OLD-STORED") {
		t.Errorf("new key holds %.300s", n)
	}
}
