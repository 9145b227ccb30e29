package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// quickCases are blocks for the quick decoder: the ones it must take and
// some it must leave to encoding/json.
var quickCases = []struct {
	name  string
	block string
	quick bool
}{
	{"text", `{"type":"text","text":"hello"}`, true},
	{"tool_reference", `{"type":"tool_reference","tool_name":"mcp__s__t"}`, false},
	{"tool_result of references", `{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference","tool_name":"a"},{"type":"tool_reference","tool_name":"b"}]}`, true},
	{"text with unicode", `{"type":"text","text":"é ✓ 🎉 – done"}`, true},
	{"text cached", `{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}`, true},
	{"spaces", " { \"type\" : \"text\" ,\n\t\"text\" : \"x\" } ", true},
	{"tool_use", `{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a \"b\" }","n":[1,{"x":null}]}}`, true},
	{"tool_use empty input", `{"type":"tool_use","id":"t","name":"A","input":{}}`, true},
	{"tool_result string", `{"type":"tool_result","tool_use_id":"t","content":"line 1 ✓"}`, true},
	{"tool_result error", `{"type":"tool_result","tool_use_id":"t","content":"bad","is_error":true}`, true},
	{"tool_result not error", `{"type":"tool_result","tool_use_id":"t","is_error":false,"content":"ok"}`, true},
	{"tool_result blocks", `{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA="}}]}`, true},
	{"tool_result empty list", `{"type":"tool_result","tool_use_id":"t","content":[]}`, true},
	{"tool_result null content", `{"type":"tool_result","tool_use_id":"t","content":null}`, true},
	{"tool_result no content", `{"type":"tool_result","tool_use_id":"t"}`, true},
	{"thinking", `{"type":"thinking","thinking":"hmm","signature":"c2ln"}`, true},
	{"redacted thinking", `{"type":"redacted_thinking","data":"abc"}`, true},
	{"image", `{"type":"image","source":{"type":"url","url":"https://x/y.png"}}`, true},
	{"document", `{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}`, true},
	{"content on a text block", `{"type":"text","text":"x","content":[1,2]}`, true},

	{"escaped text", `{"type":"text","text":"a\nb \"q\" \/ \b\f\r\t \u00e9\u2028 end"}`, true},
	{"tool_result escaped string", `{"type":"tool_result","tool_use_id":"t","content":"a\\b\n\t1"}`, true},
	{"escaped surrogate pair", `{"type":"text","text":"\ud83c\udf89"}`, false},
	{"lone surrogate", `{"type":"text","text":"\ud83c x"}`, false},
	{"bad escape", `{"type":"text","text":"\x41"}`, false},
	{"short unicode escape", `{"type":"text","text":"\u00e"}`, false},
	{"escaped key", `{"typ\u0065":"text","text":"x"}`, false},
	{"invalid utf-8 with escape", "{\"type\":\"text\",\"text\":\"\\n\xff\"}", false},
	{"unknown type", `{"type":"web_search_tool_result","tool_use_id":"t","content":[]}`, false},
	{"unknown key", `{"type":"text","text":"x","citations":[]}`, false},
	{"key in other case", `{"Type":"text","text":"x"}`, false},
	{"repeated key", `{"type":"text","text":"x","text":"y"}`, false},
	{"null text", `{"type":"text","text":null}`, false},
	{"null input", `{"type":"tool_use","id":"t","name":"A","input":null}`, false},
	{"number", `{"type":"text","text":1}`, false},
	{"no type", `{"text":"x"}`, false},
	{"empty", `{}`, false},
	{"bad input", `{"type":"tool_use","id":"t","name":"A","input":{"a":}}`, false},
	{"tool_result number content", `{"type":"tool_result","tool_use_id":"t","content":5}`, false},
	{"invalid utf-8", "{\"type\":\"text\",\"text\":\"a\xffb\"}", false},
	{"control character", "{\"type\":\"text\",\"text\":\"a\x01b\"}", false},
	{"trailing", `{"type":"text","text":"x"} y`, false},
	{"missing comma", `{"type":"text" "text":"x"}`, false},
	{"truncated", `{"type":"text","text":"x"`, false},
	{"is_error truex", `{"type":"tool_result","tool_use_id":"t","is_error":truex}`, false},
	{"not an object", `["type","text"]`, false},
}

// TestContentDecodeQuick checks that the quick decoder takes the plain
// shapes, leaves the rest, and decodes exactly as encoding/json does.
func TestContentDecodeQuick(t *testing.T) {
	for _, c := range quickCases {
		t.Run(c.name, func(t *testing.T) {
			var want Content
			werr := want.unmarshalPlain([]byte(c.block))
			var got Content
			ok := got.decodeQuick([]byte(c.block))
			if ok != c.quick {
				t.Fatalf("quick decoder took it: %v, want %v", ok, c.quick)
			}
			if !ok {
				if diff := cmp.Diff(Content{}, got); diff != "" {
					t.Fatalf("the block changed although the quick decoder gave up:\n%s", diff)
				}
				return
			}
			if werr != nil {
				t.Fatalf("quick decoder took a block encoding/json refuses (%v)", werr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("quick decoder differs (-plain +quick):\n%s", diff)
			}
		})
	}
}

// TestContentUnmarshalThroughMessages checks the decoder inside a whole
// message list, as requests and transcripts hold blocks.
func TestContentUnmarshalThroughMessages(t *testing.T) {
	var list []string
	for _, c := range quickCases {
		if json.Valid([]byte(c.block)) {
			list = append(list, c.block)
		}
	}
	for _, b := range list {
		doc := `[{"role":"user","content":[` + b + `]}]`
		var got []Message
		gerr := json.Unmarshal([]byte(doc), &got)
		var raw []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal([]byte(doc), &raw); err != nil {
			t.Fatal(err)
		}
		var want Content
		werr := want.unmarshalPlain(raw[0].Content[0])
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: error %v, plain decoder's %v", b, gerr, werr)
		}
		if gerr == nil {
			if diff := cmp.Diff(want, got[0].Content[0]); diff != "" {
				t.Fatalf("%s: differs (-plain +got):\n%s", b, diff)
			}
		}
	}
}

// FuzzContentDecodeQuick checks the quick decoder against encoding/json on
// any input: whatever it decodes, it decodes as unmarshalPlain does, and
// what it leaves it leaves untouched.
func FuzzContentDecodeQuick(f *testing.F) {
	for _, c := range quickCases {
		f.Add([]byte(c.block))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Content
		if !got.decodeQuick(b) {
			if diff := cmp.Diff(Content{}, got); diff != "" {
				t.Fatalf("changed although it gave up on %q", b)
			}
			return
		}
		var want Content
		if err := want.unmarshalPlain(b); err != nil {
			t.Fatalf("decoded %q, which encoding/json refuses (%v)", b, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("differs on %q (-plain +quick):\n%s", b, diff)
		}
	})
}

// BenchmarkContentUnmarshal compares the two decoders on a tool call.
func BenchmarkContentUnmarshal(b *testing.B) {
	block := []byte(`{"type":"tool_use","id":"toolu_0003","name":"Grep","input":{"pattern":"func [A-Z]","path":"/tmp/fixture","output_mode":"content"}}`)
	for _, c := range []struct {
		name string
		f    func(*Content, []byte) error
	}{
		{"plain", (*Content).unmarshalPlain},
		{"quick", (*Content).UnmarshalJSON},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var x Content
				if err := c.f(&x, block); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestToolReferenceRoundTrip: a tool_result of tool_reference blocks
// decodes to blocks naming their tools and encodes back to the same JSON.
func TestToolReferenceRoundTrip(t *testing.T) {
	const wire = `{"tool_use_id":"t","type":"tool_result","content":[{"type":"tool_reference","tool_name":"mcp__s__a"}]}`
	var c Content
	if err := json.Unmarshal([]byte(wire), &c); err != nil {
		t.Fatal(err)
	}
	want := Content{Type: TypeToolResult, ToolUseID: "t", Blocks: []Content{ToolReference("mcp__s__a")}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Fatalf("decoded (-want +got):\n%s", diff)
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire, string(got)); diff != "" {
		t.Fatalf("encoded (-want +got):\n%s", diff)
	}
}
