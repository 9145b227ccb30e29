package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// nasty holds every kind of character the escaper treats specially.
const nasty = "quote \" backslash \\ <b>&amp; tab\t nl\n cr\r bs\b ff\f nul\x00 us\x1f del\x7f é ✓ 🎉 \u2028 \u2029 bad\xff\xfe end"

func boolp(v bool) *bool { return &v }

// encodeCases covers every block type and every optional field.
func encodeCases() map[string]Content {
	return map[string]Content{
		"text":              TextBlock(nasty),
		"empty text":        {Type: TypeText},
		"text cached":       {Type: TypeText, Text: "x", CacheControl: &CacheControl{Type: "ephemeral", TTL: "1h"}},
		"thinking":          {Type: TypeThinking, Thinking: nasty, Signature: "sig+/="},
		"empty thinking":    {Type: TypeThinking},
		"redacted":          {Type: TypeRedactedThinking, Data: "abc<>"},
		"tool_use":          {Type: TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(" {\"file_path\" : \"/a<b>&c\u2028\",\n\t\"n\": [1, 2, {\"x\": \"\\\" <\"}]} ")},
		"tool_use no input": {Type: TypeToolUse, ID: "toolu_2", Name: "Glob"},
		"server_tool_use":   {Type: TypeServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"go"}`), CacheControl: &CacheControl{Type: "ephemeral"}},
		"tool_result text":  {Type: TypeToolResult, ToolUseID: "toolu_1", Text: nasty},
		"tool_result empty": {Type: TypeToolResult, ToolUseID: "toolu_1"},
		"tool_result error": {Type: TypeToolResult, ToolUseID: "toolu_1", Text: "no", IsError: boolp(true)},
		"tool_result ok":    {Type: TypeToolResult, ToolUseID: "toolu_1", Text: "yes", IsError: boolp(false)},
		"tool_result blocks": {Type: TypeToolResult, ToolUseID: "toolu_1", Blocks: []Content{
			TextBlock("a"), {Type: TypeImage, Source: &Source{Type: "base64", MediaType: "image/png", Data: "iVBOR"}},
		}, CacheControl: &CacheControl{Type: "ephemeral"}},
		"tool_result no blocks": {Type: TypeToolResult, ToolUseID: "toolu_1", Blocks: []Content{}},
		"tool_result references": {Type: TypeToolResult, ToolUseID: "toolu_1", Blocks: []Content{
			ToolReference("mcp__s__a<b>"), {Type: TypeToolReference, ToolName: "x", CacheControl: &CacheControl{Type: "ephemeral"}},
		}},
		"tool_reference":       ToolReference(nasty),
		"tool_reference empty": {Type: TypeToolReference},
		"image url":            {Type: TypeImage, Source: &Source{Type: "url", URL: "https://x/a.png?a=1&b=2"}},
		"image no source":      {Type: TypeImage},
		"document text":        {Type: TypeDocument, Source: &Source{Type: "text", MediaType: "text/plain", Data: nasty}},
		"unknown raw":          {Type: "container_upload", Raw: json.RawMessage(`{ "type": "container_upload", "file_id": "f<1>" }`)},
		"unknown no raw":       {Type: "mystery", Text: "t", ID: "i", Input: json.RawMessage(`{"a": 1}`)},
		"web search result":    {Type: TypeWebSearchResult, Raw: json.RawMessage(`{"type":"web_search_tool_result","content":[]}`)},
	}
}

// TestContentAppendJSONMatchesOracle shows that the hand-written encoder
// writes, for every block type, the bytes the reflection-based one wrote,
// and that Content.MarshalJSON and json.Marshal agree with it.
func TestContentAppendJSONMatchesOracle(t *testing.T) {
	for name, c := range encodeCases() {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(oracleContent(c))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.AppendJSON([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got[len("prefix"):])); diff != "" {
				t.Errorf("AppendJSON (-oracle +got):\n%s", diff)
			}
			viaMarshal, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(viaMarshal)); diff != "" {
				t.Errorf("json.Marshal (-oracle +got):\n%s", diff)
			}
		})
	}
}

// TestMessageAppendJSONMatchesOracle does the same for whole messages,
// nil content included.
func TestMessageAppendJSONMatchesOracle(t *testing.T) {
	var all []Content
	for _, c := range encodeCases() {
		all = append(all, c)
	}
	for name, m := range map[string]Message{
		"all blocks": {Role: "user", Content: all},
		"empty":      {Role: "assistant", Content: []Content{}},
		"nil":        {Role: "assistant"},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(oracleMessage{Role: m.Role, Content: oracleBlocks(m.Content)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("(-oracle +got):\n%s", diff)
			}
		})
	}
}

// TestAppendJSONInvalidRaw shows that invalid raw JSON fails the encoding,
// as it fails json.Marshal.
func TestAppendJSONInvalidRaw(t *testing.T) {
	for name, c := range map[string]Content{
		"input":       {Type: TypeToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":`)},
		"raw":         {Type: "x", Raw: json.RawMessage(`{"type":"x"`)},
		"nested":      {Type: TypeToolResult, Blocks: []Content{{Type: TypeToolUse, Input: json.RawMessage(`nope`)}}},
		"trailing":    {Type: TypeToolUse, Input: json.RawMessage(`{} {}`)},
		"bad unicode": {Type: TypeToolUse, Input: json.RawMessage("\"\xff\"")},
	} {
		t.Run(name, func(t *testing.T) {
			_, errOracle := json.Marshal(oracleContent(c))
			_, err := c.AppendJSON(nil)
			if (err == nil) != (errOracle == nil) {
				t.Errorf("AppendJSON error %v, oracle error %v", err, errOracle)
			}
		})
	}
}

// stringCases are the strings the escaper is checked on: each single byte,
// and the troublesome runes in context.
func stringCases() []string {
	cases := []string{"", nasty, "plain ascii", "\u2028", "a\u2029b", "\xe2\x80", "\xe2\x80\xa8\xe2", "🎉\xf0\x9f"}
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	return cases
}

// TestAppendStringMatchesMarshal shows that AppendString escapes as
// json.Marshal does, every ASCII byte included (the spelled-out tables
// plainASCII and plainASCIIHTML).
func TestAppendStringMatchesMarshal(t *testing.T) {
	for _, s := range stringCases() {
		checkString(t, s)
	}
	for b := range utf8.RuneSelf {
		checkString(t, "a"+string(rune(b))+"b")
	}
}

func checkString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString(nil, s); string(got) != string(want) {
		t.Errorf("AppendString(%q) = %s, json.Marshal = %s", s, got, want)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if got := AppendStringKeepHTML(nil, s); string(got) != string(want) {
		t.Errorf("AppendStringKeepHTML(%q) = %s, an Encoder without HTML escaping = %s", s, got, want)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases() {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

// rawCases are raw JSON values, valid and not.
func rawCases() []string {
	return []string{`{}`, ` [ 1 , 2 ] `, "{\"a\":\"<x>&\u2028\u2029\"}", `"\"<"`, `"\\"`, `"\\\" <"`,
		"{\n\t\"k\" : \"v v\"\r\n}", `null`, `true`, ` 1.5e3 `, `{"a":`, `{} {}`, "\"\xff\"", `'x'`, `"\u003c"`, "\"\xe2\x80\xa8\""}
}

// TestAppendRawJSONMatchesMarshal shows that AppendRawJSON writes what
// json.Marshal writes for a json.RawMessage, and fails where it fails.
func TestAppendRawJSONMatchesMarshal(t *testing.T) {
	for _, s := range rawCases() {
		checkRaw(t, []byte(s))
	}
	checkRaw(t, nil)
	checkRaw(t, []byte{})
}

func checkRaw(t *testing.T, raw []byte) {
	t.Helper()
	want, errWant := json.Marshal(json.RawMessage(raw))
	got, err := AppendRawJSON(nil, raw)
	if (err == nil) != (errWant == nil) {
		t.Fatalf("AppendRawJSON(%q) error %v, json.Marshal error %v", raw, err, errWant)
	}
	if err == nil && string(got) != string(want) {
		t.Errorf("AppendRawJSON(%q) = %s, json.Marshal = %s", raw, got, want)
	}
}

func FuzzAppendRawJSON(f *testing.F) {
	for _, s := range rawCases() {
		f.Add([]byte(s))
	}
	f.Fuzz(checkRaw)
}

// BenchmarkAppendString escapes a Read result (numbered lines of Go code:
// a tab and a newline on every line, and some <, > and &) and a run of
// prose without escapes.
func BenchmarkAppendString(b *testing.B) {
	var code strings.Builder
	for i := 1; code.Len() < 3500; i++ {
		fmt.Fprintf(&code, "%6d\t%s\n", i, "	if err := json.Unmarshal(data, &v); err != nil && n < 3 { return err }")
	}
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; it was not amused. ", 60)
	for _, c := range []struct{ name, s string }{{"read", code.String()}, {"prose", prose}} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(c.s))
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				dst = AppendString(dst[:0], c.s)
			}
		})
	}
}
