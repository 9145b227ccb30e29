package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestEstimateMatchesJSON: the estimate is a quarter of the messages'
// JSON as encoding/json writes it, however it is computed.
func TestEstimateMatchesJSON(t *testing.T) {
	isErr := true
	msgs := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("hello \"world\" <tag> é\n")}},
		{Role: "assistant", Content: []model.Content{model.TextBlock("calling"),
			{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path": "/a/b"}`)}}},
		{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "toolu_1", Text: "line 1\nline 2", IsError: &isErr}}},
	}
	var n int
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	if got, want := Estimate(msgs), int64(n/4); got != want {
		t.Errorf("Estimate = %d, want %d (%d bytes of JSON)", got, want, n)
	}
}

// boundCases are messages whose JSON is as long as can be for their
// lengths: every field of every block type set, strings of characters
// written six bytes each (control characters, <, > and &), short values
// (framing dominates), nested tool results, raw JSON of unknown blocks.
func boundCases() [][]model.Message {
	isErr := false
	worst := "\x00\x01<>&\x1f\u2028\xff"
	var all []model.Content
	for _, s := range []string{"", "x", worst, strings.Repeat(worst, 50), strings.Repeat("\x01", 10000)} {
		all = append(all,
			model.Content{Type: model.TypeText, Text: s, CacheControl: &model.CacheControl{Type: "ephemeral", TTL: "1h"}},
			model.Content{Type: model.TypeThinking, Thinking: s, Signature: s},
			model.Content{Type: model.TypeRedactedThinking, Data: s},
			model.Content{Type: model.TypeToolUse, ID: s, Name: s, Input: json.RawMessage(`{"a":"<&>","b":[1,2,{"c":null}]}`)},
			model.Content{Type: model.TypeServerToolUse, ID: s, Name: s},
			model.Content{Type: model.TypeToolResult, ToolUseID: s, Text: s, IsError: &isErr},
			model.Content{Type: model.TypeToolResult, ToolUseID: s, IsError: &isErr, Blocks: []model.Content{
				model.TextBlock(s), {Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: s}},
				{Type: model.TypeToolReference, ToolName: s}}},
			model.Content{Type: model.TypeImage, Source: &model.Source{Type: "url", URL: s}},
			model.Content{Type: model.TypeDocument, Source: &model.Source{Type: "text", MediaType: "text/plain", Data: s}},
			model.Content{Type: model.TypeToolReference, ToolName: s},
			model.Content{Type: "container_upload", Raw: json.RawMessage(`{"type":"container_upload","file_id":"<&>"}`)},
		)
	}
	out := [][]model.Message{{{Role: "user"}}, {{Role: "assistant", Content: []model.Content{{Type: model.TypeText}}}}}
	for _, b := range all {
		out = append(out, []model.Message{{Role: "user", Content: []model.Content{b}}})
	}
	out = append(out, []model.Message{{Role: "assistant", Content: all}, {Role: "user", Content: all[:3]}})
	return out
}

// TestUpperBound: the bound from lengths is never below the estimate from
// the JSON, so that a check against a threshold may trust it.
func TestUpperBound(t *testing.T) {
	for i, msgs := range boundCases() {
		if b, e := UpperBound(msgs), Estimate(msgs); b < e {
			t.Errorf("case %d: UpperBound = %d < Estimate = %d", i, b, e)
		}
	}
	if UpperBound(nil) != 0 {
		t.Error("UpperBound(nil) != 0")
	}
}

// FuzzUpperBound: any text and raw input, in a text block, a tool call and
// a tool result.
func FuzzUpperBound(f *testing.F) {
	f.Add("hello", `{}`)
	f.Add("\x00\x01<>&\u2028\xff", `{"a":"<&>"}`)
	f.Fuzz(func(t *testing.T, s, raw string) {
		msgs := []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(s),
			{Type: model.TypeToolUse, ID: s, Name: s, Input: json.RawMessage(raw)},
			{Type: model.TypeToolResult, ToolUseID: s, Text: s}}}}
		if b, e := UpperBound(msgs), Estimate(msgs); b < e {
			t.Fatalf("UpperBound = %d < Estimate = %d for %q, %q", b, e, s, raw)
		}
	})
}
