package session

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// valueCases are values of the types appendValue writes itself, with
// what makes their JSON tricky: HTML characters, line separators,
// invalid UTF-8, whitespace in raw JSON, blocks of every kind.
func valueCases() []any {
	s := "a <b> & \"c\" \\ \u2028\u2029 \x00\x1f \xff é"
	empty := ""
	yes := true
	return []any{
		nil, "", s, true, false, (*string)(nil), &s, &empty,
		json.RawMessage(nil), json.RawMessage(`{ "k" : "<v> &" , "n" : [ 1 , 2.5e3 ] }`),
		json.RawMessage("\"\u2028<\""), json.RawMessage(`null`),
		[]model.Content(nil), []model.Content{},
		[]model.Content{
			{Type: model.TypeText, Text: s, CacheControl: &model.CacheControl{Type: "ephemeral"}},
			{Type: model.TypeThinking, Thinking: s, Signature: "sig"},
			{Type: model.TypeToolUse, ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command": "echo <x> && ls"}`)},
			{Type: model.TypeToolResult, ToolUseID: "toolu_1", Text: s, IsError: &yes},
			{Type: model.TypeToolResult, ToolUseID: "toolu_2", Blocks: []model.Content{{Type: model.TypeText, Text: "<r>"}}},
			{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "iVBOR"}},
			{Type: "future_block", Raw: json.RawMessage(`{"type": "future_block", "x": "<y>"}`)},
		},
		(*Message)(nil),
		&Message{Role: "user", Content: []model.Content{{Type: model.TypeText, Text: s}}, StringContent: true},
		&Message{ID: "msg_1", Role: "assistant", Model: "claude-x", Content: []model.Content{{Type: model.TypeText, Text: s}},
			Usage: json.RawMessage(`{"input_tokens": 3}`), Extra: map[string]json.RawMessage{"container": json.RawMessage(` null `)}},
	}
}

// What appendValue writes is what a json.Encoder without HTML escaping
// writes, byte for byte, and it fails where the encoder fails.
func TestAppendValueMatchesEncoder(t *testing.T) {
	cases := append(valueCases(), json.RawMessage(`{"a":`), json.RawMessage{},
		[]model.Content{{Type: model.TypeToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{bad`)}})
	for i, v := range cases {
		want, errWant := appendEncoded([]byte("x"), v)
		got, errGot := appendValue([]byte("x"), v)
		if (errWant != nil) != (errGot != nil) {
			t.Errorf("case %d (%T): error %v, encoder's %v", i, v, errGot, errWant)
			continue
		}
		if errWant == nil && string(got) != string(want) {
			t.Errorf("case %d (%T):\n got %s\nwant %s", i, v, got, want)
		}
	}
}

func FuzzAppendValue(f *testing.F) {
	f.Add("a <b> & \u2028", []byte(` { "k" : "<v>" } `))
	f.Add("\xff\x00", []byte(`[1,`))
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		for _, v := range []any{s, &s, json.RawMessage(raw), []model.Content{{Type: model.TypeText, Text: s}},
			&Message{Role: "user", Content: []model.Content{{Type: model.TypeText, Text: s}}, StringContent: true}} {
			want, errWant := appendEncoded(nil, v)
			got, errGot := appendValue(nil, v)
			if (errWant != nil) != (errGot != nil) || errWant == nil && string(got) != string(want) {
				t.Fatalf("%T: got %s (%v), encoder %s (%v)", v, got, errGot, want, errWant)
			}
		}
	})
}

// BenchmarkEntryMarshal is one transcript line of an assistant entry with
// a tool call: what a session writes per block of a reply.
func BenchmarkEntryMarshal(b *testing.B) {
	stop := "tool_use"
	e := Entry{Type: TypeAssistant, UUID: "9f1f096a-eedd-4a8d-b135-f9936686b406", ParentUUID: "1b2e5c1e-3f0e-4a61-9c59-0d6f2f1c0e11",
		SessionID: "9b3084bd-a2e9-418a-ba89-5686261452b3", Timestamp: "2026-12-03T16:29:57.123Z", Cwd: "/home/u/proj", Version: "0.1.0",
		UserType: "external", GitBranch: "main",
		Message: &Message{ID: "msg_01", Role: "assistant", Model: "claude-sonnet-4-5", StopReason: &stop,
			Content: []model.Content{{Type: model.TypeToolUse, ID: "toolu_01", Name: "Read", Input: json.RawMessage(`{"file_path":"/home/u/proj/main.go"}`)}},
			Usage:   json.RawMessage(`{"input_tokens":1200,"output_tokens":80,"cache_read_input_tokens":9000}`)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// The typed adders write what add writes for the same value.
func TestTypedAddersMatchAdd(t *testing.T) {
	for i, v := range valueCases() {
		var typed, generic object
		generic.add("k", v)
		switch x := v.(type) {
		case string:
			typed.str("k", x)
		case bool:
			typed.boolean("k", x)
		case json.RawMessage:
			typed.raw("k", x)
		case []model.Content:
			typed.contents("k", x)
		default:
			continue
		}
		g, gerr := generic.bytes()
		w, werr := typed.bytes()
		if string(g) != string(w) || (gerr != nil) != (werr != nil) {
			t.Errorf("case %d (%T): typed %s (%v), add %s (%v)", i, v, w, werr, g, gerr)
		}
	}
	var o object
	o.str("a", "x")
	o.str("a", "y") // a key is written once
	o.raw("b", json.RawMessage(`{bad`))
	o.str("c", "z") // nothing after a failure
	if _, err := o.bytes(); err == nil {
		t.Error("an object with an invalid raw field encoded without error")
	}
	var e object
	if b, _ := e.bytes(); string(b) != "{}" {
		t.Errorf("empty object = %s", b)
	}
	var d object
	d.str("a", "x")
	d.str("a", "y")
	if b, _ := d.bytes(); string(b) != `{"a":"x"}` {
		t.Errorf("repeated key: %s", b)
	}
}
