package agentlooptest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func user(blocks ...model.Content) model.Message { return model.Message{Role: "user", Content: blocks} }
func asst(blocks ...model.Content) model.Message {
	return model.Message{Role: "assistant", Content: blocks}
}
func text(s string) model.Content { return model.TextBlock(s) }
func use(id string) model.Content {
	return model.Content{Type: model.TypeToolUse, ID: id, Name: "Read", Input: json.RawMessage(`{}`)}
}
func result(id string) model.Content {
	return model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: "ok"}
}

// Each rule of ValidateHistory, with the API's message for a breach and a
// valid neighbour that must pass.
func TestValidateHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []model.Message
		want string // "" when the API accepts it
	}{
		{"one prompt", []model.Message{user(text("hi"))}, ""},
		{"prefill", []model.Message{user(text("hi")), asst(text("Sure"))}, ""},
		{"empty final assistant (prefill)", []model.Message{user(text("hi")), asst()}, ""},
		{"rule 1: assistant first", []model.Message{asst(text("hello")), user(text("hi"))},
			`messages: first message must use the "user" role`},
		{"rule 2: empty user message", []model.Message{user(text("hi")), asst(text("a")), user()},
			"messages.2: all messages must have non-empty content except for the optional final assistant message"},
		{"rule 3: empty text block", []model.Message{user(text("hi")), asst(text(""), use("t1")), user(result("t1"))},
			"messages: text content blocks must be non-empty"},
		{"rule 4: consecutive user messages are one turn", []model.Message{user(text("a")), user(text("b")), asst(text("c"))}, ""},
		{"rule 4: a result in the second message of a user turn",
			[]model.Message{user(text("go")), asst(use("t1")), user(result("t1")), user(text("more"))}, ""},
		{"rule 4: split assistant turn", []model.Message{user(text("go")), asst(text("a")), asst(use("t1")), user(result("t1"))}, ""},
		{"rule 5: duplicate id in one message",
			[]model.Message{user(text("go")), asst(use("t1"), use("t1")), user(result("t1"))},
			"messages.1.content.1: `tool_use` ids must be unique"},
		{"rule 5: duplicate id across turns",
			[]model.Message{user(text("go")), asst(use("t1")), user(result("t1")), asst(use("t1")), user(result("t1"))},
			"messages.3.content.0: `tool_use` ids must be unique"},
		{"rule 6: result for an unknown id",
			[]model.Message{user(text("go")), asst(use("t1")), user(result("t1"), result("t9"))},
			"messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: t9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"rule 6: result with no call before it", []model.Message{user(result("t1"))},
			"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"rule 6: result for a call two turns back",
			[]model.Message{user(text("go")), asst(use("t1")), user(result("t1")), asst(text("x")), user(result("t1"))},
			"messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"rule 7: call answered", []model.Message{user(text("go")), asst(text("a"), use("t1"), use("t2")), user(result("t2"), result("t1"), text("note"))}, ""},
		{"rule 7: call without result (the cancelled run)",
			[]model.Message{user(text("go")), asst(use("t1")), user(text("next prompt"))},
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"rule 7: one of two calls answered",
			[]model.Message{user(text("go")), asst(use("t1"), use("t2")), user(result("t1"))},
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"rule 7: result after text does not count",
			[]model.Message{user(text("go")), asst(use("t1")), user(text("first"), result("t1"))},
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"rule 7: call at the end",
			[]model.Message{user(text("go")), asst(use("t1"))},
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"rule 7: assistant after assistant with a call is one turn, then no results",
			[]model.Message{user(text("go")), asst(use("t1")), asst(text("more")), user(text("hi"))},
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := agentlooptest.ValidateHistory(tc.msgs); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateHistory (-want +got):\n%s", diff)
			}
		})
	}
}

// A request with a history the API rejects gets the API's 400
// invalid_request_error body, does not consume the script, and is recorded
// in Mismatches; Lenient turns the rules off.
func TestInvalidHistoryGets400(t *testing.T) {
	s := agentlooptest.NewServer(agentlooptest.Text("scripted"))
	defer s.Close()
	body := request(false, "x")
	body["messages"] = []any{
		map[string]any{"role": "user", "content": "go"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": "next"},
	}
	resp := post(t, s.URL+"/v1/messages", body)
	raw := readAll(t, resp)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400; body %s", resp.StatusCode, raw)
	}
	want := map[string]any{
		"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. " +
			"Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		"request_id": resp.Header.Get("request-id"),
	}
	if diff := cmp.Diff(want, decode(t, raw)); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
	if s.Remaining() != 1 || s.Requests()[0].Kind != agentlooptest.KindInvalid {
		t.Errorf("remaining %d, kind %q: a rejected request must not consume the script", s.Remaining(), s.Requests()[0].Kind)
	}
	mm := s.Mismatches()
	var he *agentlooptest.HistoryError
	if len(mm) != 1 || !errors.As(mm[0], &he) || he.Request != 0 || !strings.Contains(he.Message, "toolu_1") {
		t.Errorf("mismatches = %v, want one HistoryError for request 0", mm)
	}

	s.Lenient()
	resp = post(t, s.URL+"/v1/messages", body)
	if raw := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("lenient: status %d, body %s", resp.StatusCode, raw)
	}
	if n := len(s.Mismatches()); n != 1 {
		t.Errorf("lenient: %d mismatches, want still 1", n)
	}
}

// fakeTB records what NewTB reports when the test ends.
type fakeTB struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// NewTB fails the test on an invalid history and on an exhausted script,
// unless the test opted out.
func TestNewTBStrict(t *testing.T) {
	bad := request(false, "x")
	bad["messages"] = []any{map[string]any{"role": "assistant", "content": "hello"}}
	for _, tc := range []struct {
		name   string
		optOut func(*agentlooptest.Server)
		send   []map[string]any
		want   []string // substrings of the reported failures, in order
	}{
		{"clean", nil, []map[string]any{request(false, "a")}, nil},
		{"invalid history", nil, []map[string]any{bad}, []string{`first message must use the "user" role`}},
		{"invalid history allowed", (*agentlooptest.Server).AllowInvalidHistory, []map[string]any{bad}, nil},
		{"exhausted", nil, []map[string]any{request(false, "a"), request(false, "b")}, []string{"request 1 found the script exhausted"}},
		{"exhausted allowed", (*agentlooptest.Server).AllowExhausted, []map[string]any{request(false, "a"), request(false, "b")}, nil},
		{"exhausted reply set", func(s *agentlooptest.Server) { s.SetExhausted(agentlooptest.Text("more")) },
			[]map[string]any{request(false, "a"), request(false, "b")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			s := agentlooptest.NewTB(ft, agentlooptest.Text("one"))
			if tc.optOut != nil {
				tc.optOut(s)
			}
			for _, b := range tc.send {
				readAll(t, post(t, s.URL+"/v1/messages", b))
			}
			ft.end()
			if len(ft.errs) != len(tc.want) {
				t.Fatalf("reported %q, want %d failures like %q", ft.errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(ft.errs[i], w) {
					t.Errorf("failure %d = %q, want it to contain %q", i, ft.errs[i], w)
				}
			}
		})
	}
}

// ValidateHistory never panics, on any conversation a request body can
// carry, and a history it accepts stays accepted with a new prompt after
// a final user turn.
func FuzzValidateHistory(f *testing.F) {
	f.Add(`[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"R","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]`)
	f.Add(`[{"role":"assistant","content":[]},{"role":"user","content":[{"type":"tool_result","tool_use_id":""}]}]`)
	f.Add(`[{"role":"user","content":[{"type":"text","text":""}]}]`)
	f.Fuzz(func(t *testing.T, body string) {
		var msgs []model.Message
		if json.Unmarshal([]byte(body), &msgs) != nil {
			return
		}
		err := agentlooptest.ValidateHistory(msgs)
		if err == nil && len(msgs) > 0 && msgs[len(msgs)-1].Role == "user" {
			more := append(msgs, asst(text("a")), user(text("b")))
			if err := agentlooptest.ValidateHistory(more); err != nil {
				t.Errorf("valid history %s became invalid with a plain exchange after it: %v", body, err)
			}
		}
	})
}
