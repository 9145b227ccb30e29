package agentlooptest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// realisticBody is a request as agentloop sends one: tools with schemas, a
// system prompt in blocks, a history with a tool call and its result.
func realisticBody(t testing.TB, extraTool string) []byte {
	t.Helper()
	req := model.Request{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 32000,
		Stream:    true,
		Metadata:  &model.Metadata{UserID: "u"},
		System: []model.Content{
			model.TextBlock("You are a test agent.\nBe brief: \"quoted\" {braces} [brackets]."),
			{Type: model.TypeText, Text: "more", CacheControl: &model.CacheControl{Type: "ephemeral"}},
		},
		Tools: []model.ToolDef{
			{Name: "Read", Description: "reads } a file ]", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","description":"a \"path\" \\ here"}},"required":["file_path"]}`)},
			{Name: "Bash", Description: "runs", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
			{Name: "web_search", Type: "web_search_20250305", Extra: map[string]any{"max_uses": 3}},
		},
		Messages: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("hi")}},
			{Role: "assistant", Content: []model.Content{{Type: model.TypeToolUse, ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"echo }"}`)}}},
			{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "t1", Text: "}\n"}}},
		},
	}
	if extraTool != "" {
		req.Tools = append(req.Tools, model.ToolDef{Name: extraTool, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeCases are bodies for the fast decoder: some it must take, some it
// must leave to the plain decoder, all of which it must answer as the
// plain decoder does.
func decodeCases(t testing.TB) []struct {
	name string
	body string
	fast bool // the fast path must take it
} {
	return []struct {
		name string
		body string
		fast bool
	}{
		{"agentloop request", string(realisticBody(t, "")), true},
		{"other tools", string(realisticBody(t, "Extra")), true},
		{"spaces", ` { "model" : "m" , "max_tokens" : 1 , "tools" : [ ] , "system" : [ ] , "messages" : [ {"role":"user","content":[{"type":"text","text":"x"}]} ] } `, true},
		{"null tools and system", `{"model":"m","max_tokens":1,"tools":null,"system":null,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, true},
		{"empty object", `{}`, true},
		{"string system", `{"model":"m","max_tokens":1,"system":"be brief","messages":[{"role":"user","content":"x"}]}`, false},
		{"string content", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, false},
		{"key in other case", `{"model":"m","max_tokens":1,"Tools":[{"name":"A"}],"messages":[]}`, false},
		{"duplicate key", `{"model":"m","tools":[{"name":"A"}],"tools":[{"name":"B"}],"messages":[]}`, false},
		{"duplicate key in other case", `{"model":"m","model":"n","MODEL":"o","messages":[]}`, false},
		{"escaped key", `{"mod\u0065l":"m","messages":[]}`, false},
		{"bad tools", `{"model":"m","tools":[{"name":1}],"messages":[]}`, false},
		{"bad system", `{"model":"m","system":[{"text":"no type"}],"messages":[]}`, false},
		{"unbalanced", `{"model":"m","tools":[{"name":"A"]],"messages":[]}`, false},
		{"trailing", `{"model":"m"} x`, false},
		{"missing comma", `{"model":"m" "max_tokens":1}`, false},
		{"not an object", `[1,2]`, false},
		{"truncated", `{"model":"m","tools":[{"name":"A"}`, false},
		{"unterminated string", `{"model":"m`, false},
		{"bare word", `{"model":m}`, false},

		// The messages array, decoded element by element through the cache.
		{"session", string(sessionBodies(t)[3]), true},
		{"no messages", `{"model":"m","max_tokens":1}`, true},
		{"null messages", `{"model":"m","messages":null}`, true},
		{"empty messages", `{"model":"m","messages":[]}`, true},
		{"empty messages with spaces", `{"model":"m","messages":[ ` + "\n\t" + ` ]}`, true},
		{"messages with spaces", "{\"model\":\"m\",\"messages\":[\n {\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]} ,\r\n\t{ \"role\" : \"assistant\" , \"content\" : [ ] } ]}", true},
		{"thinking", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"c2ln"},{"type":"redacted_thinking","data":"ZGF0YQ=="},{"type":"text","text":"a"}]}]}`, true},
		{"image and document", `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"document","source":{"type":"url","url":"https://x/a.pdf"},"cache_control":{"type":"ephemeral","ttl":"1h"}},{"type":"text","text":"what is it?"}]}]}`, true},
		{"tool_result blocks", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]},{"type":"tool_result","tool_use_id":"t2","content":[]},{"type":"tool_result","tool_use_id":"t3","content":null,"is_error":false}]}]}`, true},
		{"tool_use", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls \"a b\"","n":[1,2.5e3,null,true]}},{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}]}]}`, true},
		{"unknown block and fields", `{"model":"m","messages":[{"role":"user","content":[{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"x":1}]},{"type":"text","text":"x","citations":null}],"extra":{"a":[1,{"b":"]}"}]}}]}`, true},
		{"escapes", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"\u00e9\ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t \u0000"}]}]}`, true},
		{"escaped key in message", `{"model":"m","messages":[{"r\u006fle":"user","content":[{"type":"text","text":"x"}]}]}`, true},
		{"key in other case in message", `{"model":"m","messages":[{"ROLE":"user","Content":[{"Type":"text","TEXT":"x"}]}]}`, true},
		{"duplicate key in message", `{"model":"m","messages":[{"role":"user","role":"assistant","content":[{"type":"text","text":"x"}],"content":[{"type":"text","text":"y"},{"type":"text","text":"z"}]}]}`, true},
		{"duplicate key in block", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","text":"y"}]}]}`, true},
		{"null content", `{"model":"m","messages":[{"role":"user","content":null}]}`, true},
		{"empty message", `{"model":"m","messages":[{}]}`, true},
		{"invalid UTF-8", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}]}", true},
		{"repeated message", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"text","text":"x"}]}]}`, true},
		{"string content among blocks", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","content":"y"}]}`, false},
		{"messages key in other case", `{"model":"m","Messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, false},
		{"messages key folded", "{\"model\":\"m\",\"me\u017f\u017fages\":[]}", false},
		{"null message", `{"model":"m","messages":[null]}`, false},
		{"number message", `{"model":"m","messages":[1]}`, false},
		{"messages not an array", `{"model":"m","messages":{"role":"user"}}`, false},
		{"messages a string", `{"model":"m","messages":"x"}`, false},
		{"bad role type", `{"model":"m","messages":[{"role":1,"content":[]}]}`, false},
		{"block without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"x"}]}]}`, false},
		{"trailing comma in messages", `{"model":"m","messages":[{"role":"user","content":[]},]}`, false},
		{"leading comma in messages", `{"model":"m","messages":[,{"role":"user","content":[]}]}`, false},
		{"missing comma in messages", `{"model":"m","messages":[{"role":"user","content":[]} {"role":"user","content":[]}]}`, false},
		{"mismatched brackets in message", `{"model":"m","messages":[{"role":"user","content":[}]]}`, false},
		{"bad message then good", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}],},{"role":"user","content":[]}]}`, false},
		{"unterminated messages", `{"model":"m","messages":[{"role":"user","content":[]}`, false},

		// A message with a breakpoint, then the same without it: the
		// second is found in the cache when the first could be unmarked.
		moved("moved breakpoint", `{"type":"text","text":"x"`, `,"cache_control":{"type":"ephemeral"}`, `}`),
		moved("moved breakpoint with spaces", `{ "type" : "tool_result" , "tool_use_id" : "t" , "content" : [ {"type":"text","text":"r","cache_control":{"type":"ephemeral"}} ] `, ` ,`+"\n"+` "cache_control" : { "type" : "ephemeral", "ttl": "1h" } `, `}`),
		moved("moved breakpoint before a field", `{"type":"text"`, `,"cache_control":{"type":"ephemeral"}`, `,"text":"x"}`),
		moved("breakpoint first", `{`, `"cache_control":{"type":"ephemeral"},`, `"type":"text","text":"x"}`),
		moved("breakpoint twice", `{"type":"text","text":"x","cache_control":{"type":"ephemeral"}`, `,"cache_control":{"type":"ephemeral","ttl":"1h"}`, `}`),
		moved("breakpoint in other case too", `{"type":"text","text":"x","Cache_Control":{"type":"ephemeral"}`, `,"cache_control":{"type":"ephemeral","ttl":"1h"}`, `}`),
		moved("breakpoint in other case", `{"type":"text","text":"x"`, `,"CACHE_CONTROL":{"type":"ephemeral"}`, `}`),
		moved("breakpoint escaped", `{"type":"text","text":"x"`, `,"cache\u005fcontrol":{"type":"ephemeral"}`, `}`),
		moved("null breakpoint", `{"type":"text","text":"x"`, `,"cache_control":null`, `}`),
		moved("breakpoint of an unknown block", `{"type":"mystery","text":"x"`, `,"cache_control":{"type":"ephemeral"}`, `}`),
		moved("breakpoint with unknown field", `{"type":"text","text":"x","citations":[]`, `,"cache_control":{"type":"ephemeral"}`, `}`),
		moved("breakpoint of an image", `{"type":"image","source":{"type":"url","url":"u"}`, `,"cache_control":{"type":"ephemeral"}`, `}`),
		{"two marked blocks", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]}`, true},
		{"message keys in other case", `{"model":"m","messages":[{"role":"user","Content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]},{"role":"user","Content":[{"type":"text","text":"a"}]}]}`, true},
		{"content twice", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}],"content":[{"type":"text","text":"b"}]},{"role":"user","content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}]}`, true},
	}
}

// moved is a decodeCases case of two user messages whose blocks are
// before+mark+after and before+after.
func moved(name, before, mark, after string) struct {
	name string
	body string
	fast bool
} {
	msg := func(block string) string { return `{"role":"user","content":[` + block + `]}` }
	return struct {
		name string
		body string
		fast bool
	}{name, `{"model":"m","messages":[` + msg(before+mark+after) + `,` + msg(before+after) + `]}`, true}
}

// TestDecodeFastMatchesPlain checks that the caching decoder gives exactly
// what decodeParams gives, on a cache miss and on a hit, and that it takes
// the fast path for the requests agentloop sends. Passes 0 and 1 use a
// decoder of its own (what the body alone leaves in the caches), 2 and 3
// one shared by all the cases.
func TestDecodeFastMatchesPlain(t *testing.T) {
	var shared decoder
	for _, c := range decodeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want, werr := decodeParams([]byte(c.body))
			var own decoder
			for pass := range 4 { // a miss, then a hit
				d := &own
				if pass >= 2 {
					d = &shared
				}
				p, ok := d.fast([]byte(c.body))
				if ok != c.fast {
					t.Fatalf("pass %d: fast path took it: %v, want %v", pass, ok, c.fast)
				}
				if ok {
					if werr != nil {
						t.Fatalf("pass %d: fast path decoded a body the plain decoder refuses (%v)", pass, werr)
					}
					if diff := cmp.Diff(want, p); diff != "" {
						t.Fatalf("pass %d: fast path differs (-plain +fast):\n%s", pass, diff)
					}
				}
				got, gerr := d.decode([]byte(c.body))
				if (gerr == nil) != (werr == nil) {
					t.Fatalf("pass %d: decode error %v, plain decoder's %v", pass, gerr, werr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("pass %d: decode differs (-plain +decode):\n%s", pass, diff)
				}
			}
		})
	}
}

// TestDecodeFastCopiesSlices checks that two requests with the same tools
// do not share the slices a test may change.
func TestDecodeFastCopiesSlices(t *testing.T) {
	var d decoder
	body := realisticBody(t, "")
	a, _ := d.decode(body)
	b, _ := d.decode(body)
	a.Tools[0].Name = "changed"
	a.System[0].Text = "changed"
	if b.Tools[0].Name != "Read" || b.System[0].Text == "changed" {
		t.Fatalf("a change to one request's tools or system showed in another's: %q, %q", b.Tools[0].Name, b.System[0].Text)
	}
}

// TestFieldCacheBounded checks that the cache keeps at most fieldCacheSize
// values and the most recently used ones.
func TestFieldCacheBounded(t *testing.T) {
	var d decoder
	for i := range 3 * fieldCacheSize {
		body := realisticBody(t, "Tool"+strings.Repeat("x", i))
		if _, ok := d.fast(body); !ok {
			t.Fatalf("body %d: fast path refused it", i)
		}
		d.fast(realisticBody(t, "")) // keep this one in use
	}
	if n := len(d.tools.entries); n != fieldCacheSize {
		t.Fatalf("tools cache holds %d values, want %d", n, fieldCacheSize)
	}
	if _, hit := d.tools.lookup(0, nil); hit {
		t.Fatal("lookup of nothing hit")
	}
	last := d.tools.entries[len(d.tools.entries)-1]
	var probe []byte
	fields, _ := topFields(realisticBody(t, ""))
	for _, f := range fields {
		if string(f.key) == "tools" {
			probe = f.raw
		}
	}
	if string(last.raw) != string(probe) {
		t.Fatal("the value used every other request is not the most recently used entry")
	}
}

// FuzzDecodeFast checks the fast decoder against the plain one on any
// body: when it answers, it answers as the plain decoder does, on a miss
// and on a hit of its caches, with a message cache of the default size and
// with one so small that it evicts all the time.
func FuzzDecodeFast(f *testing.F) {
	for _, c := range decodeCases(f) {
		f.Add([]byte(c.body))
	}
	var d, small decoder
	small.msgs.limit = msgShards * 64
	f.Fuzz(func(t *testing.T, body []byte) {
		want, werr := decodeParams(body)
		for pass := range 4 {
			dec := &d
			if pass >= 2 {
				dec = &small
			}
			p, ok := dec.fast(body)
			if !ok {
				continue
			}
			if werr != nil {
				t.Fatalf("fast path decoded %q, which the plain decoder refuses (%v)", body, werr)
			}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Fatalf("fast path differs on %q (-plain +fast):\n%s", body, diff)
			}
		}
	})
}

// BenchmarkDecodeRequest compares the plain decoder with the caching one
// on agentloop's request (the cache warm, as on a server's second
// request).
func BenchmarkDecodeRequest(b *testing.B) {
	body := realisticBody(b, "")
	tools := make([]model.ToolDef, 0, 20)
	for i := range 20 {
		tools = append(tools, model.ToolDef{Name: "T" + strings.Repeat("x", i), Description: strings.Repeat("describes the tool. ", 30),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("an argument ", 20) + `"}},"required":["a"]}`)})
	}
	var req model.Request
	_ = json.Unmarshal(body, &req)
	req.Tools = tools
	body, _ = json.Marshal(req)
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeParams(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		var d decoder
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.decode(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
