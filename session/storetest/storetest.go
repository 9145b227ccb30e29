// Package storetest is a conformance suite for session.Store
// implementations.
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t,
//			func(t *testing.T) session.Store { return newMyStore(t) },
//			func(t *testing.T, s session.Store) session.Store { return reopenMyStore(t, s) })
//	}
//
// The suite never skips: a backend a test cannot reach is the caller's
// to report (fail when $CI is set, as this module's stores do).
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Equal are the options under which entries loaded from a store must equal
// those appended: empty and nil maps and slices are equal, and JSON values
// kept verbatim compare by meaning, not bytes.
var Equal = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }, cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) }),
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return cmp.Equal(va, vb)
}

// Run runs the suite. newStore returns a new, empty store for each test.
// reopen returns a second instance on the backend of s, as another host
// would have it (its own connection or client on the same table, key
// prefix or directory); a store with no backend to share, such as
// session.MemoryStore, returns s itself. A nil reopen fails the tests
// that need it.
func Run(t *testing.T, newStore func(t *testing.T) session.Store, reopen func(t *testing.T, s session.Store) session.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s session.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"NeverWritten", testNeverWritten},
		{"Idempotent", testIdempotent},
		{"Order", testOrder},
		{"KeysAreSeparate", testKeysSeparate},
		{"Subkeys", testSubkeys},
		{"DeleteCascades", testDelete},
		{"List", testList},
		{"Concurrent", testConcurrent},
		{"InvalidKey", testInvalidKey},
		{"Canceled", testCanceled},
		{"CanceledMidAppend", testCanceledMidAppend},
		{"OverlappingAppends", func(t *testing.T, s session.Store) { testOverlapping(t, s, s) }},
		{"DeleteRacingAppend", func(t *testing.T, s session.Store) { testDeleteRacingAppend(t, s, s) }},
		{"LargeEntry", testLargeEntry},
		{"LongTranscript", testLongTranscript},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
	two := []struct {
		name string
		fn   func(t *testing.T, a, b session.Store)
	}{
		{"TwoInstances", testTwoInstances},
		{"TwoInstancesOverlappingAppends", testOverlapping},
		{"TwoInstancesDeleteRacingAppend", testDeleteRacingAppend},
		{"Watch", testWatch},
	}
	for _, tc := range two {
		t.Run(tc.name, func(t *testing.T) {
			if reopen == nil {
				t.Fatal("storetest.Run needs reopen to get a second instance on the same backend")
			}
			a := newStore(t)
			tc.fn(t, a, reopen(t, a))
		})
	}
}

var ctx = context.Background()

func key(id string) session.Key {
	return session.Key{ProjectKey: "-home-user-proj", SessionID: id}
}

const sid = "0b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"

func str(s string) *string { return &s }

// Conversation returns a sample of entries of every kind a transcript
// holds; uuids are made unique by prefix.
func Conversation(prefix string) []session.Entry {
	errTrue := true
	env := func(e session.Entry) session.Entry {
		e.SessionID, e.Cwd, e.Version, e.GitBranch = sid, "/home/user/proj", "agentloop 0.1.0", "main"
		e.UserType, e.Entrypoint, e.Timestamp = "external", "sdk-go", "2026-01-02T03:04:05.678Z"
		return e
	}
	u := func(n int) string { return fmt.Sprintf("%s-%04d-0000-0000-000000000000", prefix, n) }
	return []session.Entry{
		{Type: "queue-operation", Raw: json.RawMessage(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-02T03:04:05.000Z","sessionId":"` + sid + `","content":"hi"}`),
			Timestamp: "2026-01-02T03:04:05.000Z", SessionID: sid, Extra: map[string]json.RawMessage{"operation": json.RawMessage(`"enqueue"`), "content": json.RawMessage(`"hi"`)}},
		env(session.Entry{Type: session.TypeUser, UUID: u(1), PermissionMode: "default",
			Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock("Read x.txt")}, StringContent: true},
			Extra:   map[string]json.RawMessage{"promptId": json.RawMessage(`"p1"`)}}),
		env(session.Entry{Type: session.TypeAssistant, UUID: u(2), ParentUUID: u(1), RequestID: "req_1",
			Message: &session.Message{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude-x",
				Content:    []model.Content{{Type: model.TypeThinking, Thinking: "Let me read it.", Signature: "sig=="}},
				StopReason: str("tool_use"), Usage: json.RawMessage(`{"input_tokens":10,"output_tokens":3}`)}}),
		env(session.Entry{Type: session.TypeAssistant, UUID: u(3), ParentUUID: u(2), RequestID: "req_1",
			Message: &session.Message{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude-x",
				Content:    []model.Content{{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/home/user/proj/x.txt"}`)}},
				StopReason: str("tool_use"), Extra: map[string]json.RawMessage{"stop_details": json.RawMessage(`null`)}}}),
		env(session.Entry{Type: session.TypeUser, UUID: u(4), ParentUUID: u(3), SourceToolAssistantUUID: u(3),
			ToolUseResult: json.RawMessage(`{"type":"text","file":{"content":"x\n"}}`),
			Message: &session.Message{Role: "user", Content: []model.Content{
				{Type: model.TypeToolResult, ToolUseID: "toolu_1", Blocks: []model.Content{model.TextBlock("1\tx")}, IsError: &errTrue}}}}),
		env(session.Entry{Type: session.TypeSystem, UUID: u(5), ParentUUID: u(4), Subtype: "api_error", Level: "error",
			Extra: map[string]json.RawMessage{"retryInMs": json.RawMessage(`500`), "error": json.RawMessage(`{"status":529}`)}}),
		env(session.Entry{Type: session.TypeAssistant, UUID: u(6), ParentUUID: u(5),
			Message: &session.Message{ID: "msg_2", Type: "message", Role: "assistant", Model: "claude-x",
				Content: []model.Content{model.TextBlock("It says x.")}, StopReason: str("end_turn")}}),
		{Type: session.TypeLastPrompt, LastPrompt: "Read x.txt", LeafUUID: u(6), SessionID: sid},
		{Type: session.TypeCostState, SessionID: sid, Cost: &session.CostState{TotalCostUSD: 0.0123, TotalAPIDuration: 42,
			StartTime: 1796201464495, ModelUsage: map[string]message.ModelUsage{"claude-x": {InputTokens: 10, OutputTokens: 3, CostUSD: 0.0123}}},
			Extra: map[string]json.RawMessage{"futureField": json.RawMessage(`[1,2]`)}},
		{Type: session.TypeCustomTitle, CustomTitle: "Reading x", SessionID: sid},
		{Type: session.TypeTag, Tag: "", SessionID: sid},
	}
}

func mustAppend(t *testing.T, s session.Store, k session.Key, es []session.Entry) {
	t.Helper()
	if err := s.Append(ctx, k, es); err != nil {
		t.Fatalf("Append(%v): %v", k, err)
	}
}

func mustLoad(t *testing.T, s session.Store, k session.Key) []session.Entry {
	t.Helper()
	es, err := s.Load(ctx, k)
	if err != nil {
		t.Fatalf("Load(%v): %v", k, err)
	}
	return es
}

func testRoundTrip(t *testing.T, s session.Store) {
	es := Conversation("aaaaaaaa")
	mustAppend(t, s, key(sid), es[:3])
	mustAppend(t, s, key(sid), es[3:])
	got := mustLoad(t, s, key(sid))
	if diff := cmp.Diff(es, got, Equal); diff != "" {
		t.Errorf("Load after Append (-appended +loaded):\n%s", diff)
	}
	// What Load returns is the store's copy: changing it changes nothing.
	got[1].Message.Content[0].Text = "changed"
	if diff := cmp.Diff(es, mustLoad(t, s, key(sid)), Equal); diff != "" {
		t.Errorf("Load after changing a loaded entry (-appended +loaded):\n%s", diff)
	}
}

func testNeverWritten(t *testing.T, s session.Store) {
	es, err := s.Load(ctx, key(sid))
	if err != nil || es != nil {
		t.Errorf("Load of a key never written = %v, %v; want nil, nil", es, err)
	}
	if err := s.Append(ctx, key(sid), nil); err != nil {
		t.Errorf("Append of no entries: %v", err)
	}
	subs, err := s.ListSubkeys(ctx, key(sid).ProjectKey, sid)
	if err != nil || len(subs) != 0 {
		t.Errorf("ListSubkeys of an empty store = %v, %v", subs, err)
	}
	if err := s.Delete(ctx, key(sid)); err != nil {
		t.Errorf("Delete of a key never written: %v", err)
	}
}

func testIdempotent(t *testing.T, s session.Store) {
	es := Conversation("bbbbbbbb")
	mustAppend(t, s, key(sid), es)
	mustAppend(t, s, key(sid), es) // a retried batch
	var want []session.Entry
	want = append(want, es...)
	for _, e := range es {
		if e.UUID == "" { // entries without uuid always append
			want = append(want, e)
		}
	}
	if diff := cmp.Diff(want, mustLoad(t, s, key(sid)), Equal); diff != "" {
		t.Errorf("after appending a batch twice (-want +got):\n%s", diff)
	}
	// A uuid repeated within one batch is kept once.
	dup := []session.Entry{es[1], es[1]}
	dup[1].UUID = "cccccccc-0000-0000-0000-000000000000"
	dup[0].UUID = dup[1].UUID
	k := key("1b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a")
	mustAppend(t, s, k, dup)
	if got := mustLoad(t, s, k); len(got) != 1 {
		t.Errorf("a batch with a repeated uuid stored %d entries, want 1", len(got))
	}
}

func textEntry(i int) session.Entry {
	return session.Entry{Type: session.TypeUser, UUID: fmt.Sprintf("dddddddd-%04d-0000-0000-000000000000", i),
		SessionID: sid, Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock(fmt.Sprint(i))}, StringContent: true}}
}

func testOrder(t *testing.T, s session.Store) {
	var want []session.Entry
	for i := range 50 {
		batch := []session.Entry{textEntry(2 * i), textEntry(2*i + 1)}
		mustAppend(t, s, key(sid), batch)
		want = append(want, batch...)
	}
	if diff := cmp.Diff(want, mustLoad(t, s, key(sid)), Equal); diff != "" {
		t.Errorf("order of appended entries (-want +got):\n%s", diff)
	}
}

func testKeysSeparate(t *testing.T, s session.Store) {
	other := "2b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"
	keys := []session.Key{
		key(sid), key(other),
		{ProjectKey: "-other-project", SessionID: sid},
		{ProjectKey: key(sid).ProjectKey, SessionID: sid, Subpath: "subagents/agent-a1"},
	}
	for i, k := range keys {
		mustAppend(t, s, k, []session.Entry{textEntry(i)})
	}
	for i, k := range keys {
		if diff := cmp.Diff([]session.Entry{textEntry(i)}, mustLoad(t, s, k), Equal); diff != "" {
			t.Errorf("Load(%v) (-want +got):\n%s", k, diff)
		}
	}
}

func testSubkeys(t *testing.T, s session.Store) {
	pk := key(sid).ProjectKey
	mustAppend(t, s, key(sid), []session.Entry{textEntry(0)})
	want := []string{"subagents/agent-a1", "subagents/agent-b2", "subagents/workflows/run1/agent-c3"}
	for i, sub := range want {
		mustAppend(t, s, session.Key{ProjectKey: pk, SessionID: sid, Subpath: sub}, []session.Entry{textEntry(i + 1)})
	}
	mustAppend(t, s, session.Key{ProjectKey: pk, SessionID: "3b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a", Subpath: "subagents/agent-zz"}, []session.Entry{textEntry(9)})
	got, err := s.ListSubkeys(ctx, pk, sid)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListSubkeys (-want +got):\n%s", diff)
	}
	for i, sub := range want {
		k := session.Key{ProjectKey: pk, SessionID: sid, Subpath: sub}
		if diff := cmp.Diff([]session.Entry{textEntry(i + 1)}, mustLoad(t, s, k), Equal); diff != "" {
			t.Errorf("Load(%v) (-want +got):\n%s", k, diff)
		}
	}
}

func testDelete(t *testing.T, s session.Store) {
	pk := key(sid).ProjectKey
	other := key("4b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a")
	sub1 := session.Key{ProjectKey: pk, SessionID: sid, Subpath: "subagents/agent-a1"}
	sub2 := session.Key{ProjectKey: pk, SessionID: sid, Subpath: "subagents/agent-b2"}
	for _, k := range []session.Key{key(sid), sub1, sub2, other} {
		mustAppend(t, s, k, []session.Entry{textEntry(1)})
	}
	// Deleting a subkey removes only it.
	if err := s.Delete(ctx, sub1); err != nil {
		t.Fatal(err)
	}
	if got := mustLoad(t, s, sub1); got != nil {
		t.Errorf("Load of a deleted subkey = %v, want nil", got)
	}
	if got := mustLoad(t, s, sub2); len(got) != 1 {
		t.Errorf("Load of a sibling subkey = %d entries, want 1", len(got))
	}
	// Deleting the main key cascades.
	if err := s.Delete(ctx, key(sid)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []session.Key{key(sid), sub2} {
		if got := mustLoad(t, s, k); got != nil {
			t.Errorf("Load(%v) after deleting the session = %v, want nil", k, got)
		}
	}
	if subs, err := s.ListSubkeys(ctx, pk, sid); err != nil || len(subs) != 0 {
		t.Errorf("ListSubkeys after deleting the session = %v, %v", subs, err)
	}
	if got := mustLoad(t, s, other); len(got) != 1 {
		t.Errorf("another session lost entries: %d, want 1", len(got))
	}
	ls, err := s.List(ctx, pk)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].SessionID != other.SessionID {
		t.Errorf("List after delete = %v, want only %s", ls, other.SessionID)
	}
	// A deleted session can be written again, from scratch.
	mustAppend(t, s, key(sid), []session.Entry{textEntry(1)})
	if got := mustLoad(t, s, key(sid)); len(got) != 1 {
		t.Errorf("after re-creating a deleted session: %d entries, want 1", len(got))
	}
}

func testList(t *testing.T, s session.Store) {
	pk := key(sid).ProjectKey
	ls, err := s.List(ctx, pk)
	if err != nil || len(ls) != 0 {
		t.Fatalf("List of an empty store = %v, %v", ls, err)
	}
	ids := []string{sid, "5b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"}
	for _, id := range ids {
		mustAppend(t, s, key(id), []session.Entry{textEntry(1)})
	}
	// Sub-transcripts and other projects are not sessions of this project.
	mustAppend(t, s, session.Key{ProjectKey: pk, SessionID: "6b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a", Subpath: "subagents/agent-x"}, []session.Entry{textEntry(1)})
	mustAppend(t, s, session.Key{ProjectKey: "-elsewhere", SessionID: "7b7e4a8c-2d7f-4f8e-9b7a-1f2e3d4c5b6a"}, []session.Entry{textEntry(1)})
	ls, err = s.List(ctx, pk)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.SessionID)
		if l.ModTime.IsZero() {
			t.Errorf("session %s has no ModTime", l.SessionID)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func testConcurrent(t *testing.T, s session.Store) {
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e := textEntry(w*1000 + i)
				if err := s.Append(ctx, key(sid), []session.Entry{e}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustLoad(t, s, key(sid))
	if len(got) != writers*each {
		t.Fatalf("%d entries after concurrent appends, want %d", len(got), writers*each)
	}
	// Each writer's entries keep their order.
	last := map[int]int{}
	for _, e := range got {
		var n int
		fmt.Sscan(e.Message.Content[0].Text, &n)
		w, i := n/1000, n%1000
		if prev, ok := last[w]; ok && i <= prev {
			t.Errorf("writer %d: entry %d after %d", w, i, prev)
		}
		last[w] = i
	}
}

func testInvalidKey(t *testing.T, s session.Store) {
	for _, k := range []session.Key{
		{ProjectKey: "", SessionID: sid},
		{ProjectKey: "p", SessionID: ""},
		{ProjectKey: "..", SessionID: sid},
		{ProjectKey: "p", SessionID: "../x"},
		{ProjectKey: "p", SessionID: sid, Subpath: "../escape"},
		{ProjectKey: "p", SessionID: sid, Subpath: "/abs"},
	} {
		if err := s.Append(ctx, k, []session.Entry{textEntry(1)}); err == nil {
			t.Errorf("Append(%+v) succeeded, want an error", k)
		}
	}
}
