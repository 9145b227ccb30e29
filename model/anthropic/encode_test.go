package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// marshalBody is the body as json.Marshal writes it, the encoder's oracle.
func marshalBody(t *testing.T, req *model.Request) string {
	t.Helper()
	r := *req
	r.Stream = true
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEncodeMatchesMarshal shows that the request encoder writes the bytes
// json.Marshal writes, for requests with every optional field set and
// none, and again when the tools come from the cache.
func TestEncodeMatchesMarshal(t *testing.T) {
	full := historyRequest(9, builtinToolDefs(t))
	full.ContextManagement = &model.ContextManagement{Edits: []model.ContextEdit{{Type: model.EditClearToolUses, ClearAllToolInputs: true}}}
	full.Output = &model.OutputConfig{Effort: "high", TaskBudget: &model.TaskBudget{Type: "tokens", Total: 5000}}
	full.Thinking = &model.Thinking{Type: "enabled", BudgetTokens: 1024, Display: "summarized"}
	serverTool := append(builtinToolDefs(t), model.ToolDef{Name: "web_search", Type: "web_search_20250305", Extra: map[string]any{"max_uses": 5}})
	for name, req := range map[string]*model.Request{
		"history":      historyRequest(40, builtinToolDefs(t)),
		"full":         full,
		"bare":         {Model: "m"},
		"empty meta":   {Model: "m", Metadata: &model.Metadata{}, Messages: []model.Message{}, System: []model.Content{}, Tools: []model.ToolDef{}},
		"server tool":  {Model: "m", Tools: serverTool, MaxTokens: -1},
		"nasty fields": {Model: "<m>\u2028", Metadata: &model.Metadata{UserID: `{"session_id":"a&b"}`}, Messages: []model.Message{{Role: "user"}}},
	} {
		t.Run(name, func(t *testing.T) {
			want := marshalBody(t, req)
			var e encoder
			for round := range 2 { // the second round serves the tools from the cache
				got, err := e.encode(req)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, string(got)); diff != "" {
					t.Fatalf("round %d (-json.Marshal +encode):\n%s", round, diff)
				}
			}
		})
	}
}

// TestEncodeInvalidInput shows that a block with invalid raw JSON fails the
// encoding with an error naming the message.
func TestEncodeInvalidInput(t *testing.T) {
	req := &model.Request{Model: "m", Messages: []model.Message{{Role: "assistant", Content: []model.Content{
		{Type: model.TypeToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":`)}}}}}
	var e encoder
	if _, err := e.encode(req); err == nil || !contains(err.Error(), "message 0") {
		t.Fatalf("err = %v, want an error naming message 0", err)
	}
}

// TestEncodeNeverStale changes a request between two encodings in every way
// the loop does (a cache breakpoint moved, a merged message, a compacted
// history, a tool list changed, a schema edited in place) and checks each
// body against json.Marshal: no cached bytes may outlive what they encode.
func TestEncodeNeverStale(t *testing.T) {
	var e encoder
	req := historyRequest(6, builtinToolDefs(t))
	steps := []struct {
		name   string
		change func(r *model.Request)
	}{
		{"unchanged", func(*model.Request) {}},
		{"breakpoint moved", func(r *model.Request) {
			last := &r.Messages[len(r.Messages)-1]
			last.Content[len(last.Content)-1].CacheControl = nil
			r.Messages = append(r.Messages, model.Message{Role: "user", Content: []model.Content{
				{Type: model.TypeText, Text: "next", CacheControl: &model.CacheControl{Type: "ephemeral"}}}})
		}},
		{"merged in place", func(r *model.Request) {
			last := &r.Messages[len(r.Messages)-1]
			last.Content = append(last.Content, model.TextBlock("merged"))
		}},
		{"block edited in place", func(r *model.Request) { r.Messages[1].Content[1].Text = "edited" }},
		{"compacted", func(r *model.Request) {
			r.Messages = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("summary")}}}
		}},
		{"tool dropped", func(r *model.Request) { r.Tools = r.Tools[1:] }},
		{"description changed", func(r *model.Request) { r.Tools[0].Description += " more" }},
		{"schema copied", func(r *model.Request) { r.Tools[0].InputSchema = slices.Clone(r.Tools[0].InputSchema) }},
		{"schema edited in place", func(r *model.Request) {
			s := r.Tools[0].InputSchema
			i := bytes.Index(s, []byte(`"object"`))
			copy(s[i+1:], "OBJECT") // same slice, same length, other bytes
		}},
		{"schema edited in place again", func(r *model.Request) {
			s := r.Tools[0].InputSchema
			i := bytes.Index(s, []byte(`"OBJECT"`))
			copy(s[i+1:], "Object")
		}},
		{"defer_loading set", func(r *model.Request) { r.Tools[1].DeferLoading = true }},
		{"system text edited in place", func(r *model.Request) { r.System[0].Text += "!" }},
		{"system breakpoint edited through its pointer", func(r *model.Request) { r.System[0].CacheControl.TTL = "1h" }},
		{"system block added", func(r *model.Request) { r.System = append(r.System, model.TextBlock("more")) }},
	}
	for _, st := range steps {
		st.change(req)
		got, err := e.encode(req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(marshalBody(t, req), string(got)); diff != "" {
			t.Fatalf("%s: stale body (-json.Marshal +encode):\n%s", st.name, diff)
		}
	}
}

// TestToolsCacheBounded shows that the tools cache keeps at most
// maxMRUEntries lists, most recently used first, and serves a list equal
// to a cached one from its entry.
func TestToolsCacheBounded(t *testing.T) {
	var c mru[[]model.ToolDef, toolsField]
	list := func(i int) []model.ToolDef {
		return []model.ToolDef{{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	first, err := c.encoded(list(0))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.encoded(list(0)) // an equal list built anew
	if &first[0] != &again[0] {
		t.Errorf("an equal list was encoded again instead of served from the cache")
	}
	for i := range 2 * maxMRUEntries {
		if _, err := c.encoded(list(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.entries) != maxMRUEntries {
		t.Errorf("%d entries, want %d", len(c.entries), maxMRUEntries)
	}
	if got, want := c.entries[0].v[0].Name, fmt.Sprintf("t%d", 2*maxMRUEntries-1); got != want {
		t.Errorf("most recent entry %s, want %s", got, want)
	}
}

// TestMsgCacheServesAndDrops shows that the history's messages are encoded
// once and then served from the cache (an entry's bytes, poisoned here,
// show up in the next body), that the last message is not kept, and that
// entries go when their messages are collected.
func TestMsgCacheServesAndDrops(t *testing.T) {
	var e encoder
	req := historyRequest(6, nil)
	if _, err := e.encode(req); err != nil {
		t.Fatal(err)
	}
	if n := e.msgs.len(); n != 4 { // the prompt is too short to keep; the last is not kept
		t.Fatalf("%d entries after the first request, want 4", n)
	}
	e.msgs.m.Range(func(k, v any) bool {
		if k.(msgKey).first.Value() == &req.Messages[1].Content[0] {
			v.(*msgEntry).json = []byte(`"poisoned"`)
		}
		return true
	})
	got, err := e.encode(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`"poisoned"`)) {
		t.Fatalf("message 1 was encoded again, not served from the cache")
	}

	req = nil
	deadline := time.Now().Add(5 * time.Second)
	for e.msgs.len() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.msgs.len(); n > 0 {
		t.Errorf("%d entries left after the messages were collected", n)
	}
}

// TestMsgCacheNeverStale changes cached messages in place in every way a
// caller could and checks that the body still equals json.Marshal's.
func TestMsgCacheNeverStale(t *testing.T) {
	img := &model.Source{Type: "base64", MediaType: "image/png", Data: strings.Repeat("iVBOR", 100)}
	isErr := false
	history := func() []model.Message {
		return []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock(strings.Repeat("prompt ", 50))}},
			{Role: "assistant", Content: []model.Content{
				{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/` + strings.Repeat("a", 300) + `"}`)}}},
			{Role: "user", Content: []model.Content{
				{Type: model.TypeToolResult, ToolUseID: "toolu_1", IsError: &isErr, Blocks: []model.Content{
					model.TextBlock(strings.Repeat("line\n", 60)), {Type: model.TypeImage, Source: img}}}}},
			{Role: "assistant", Content: []model.Content{model.TextBlock("last")}},
		}
	}
	for _, tt := range []struct {
		name   string
		change func(ms []model.Message)
	}{
		{"text reassigned", func(ms []model.Message) { ms[0].Content[0].Text += "!" }},
		{"role changed", func(ms []model.Message) { ms[0].Role = "assistant" }},
		{"breakpoint added", func(ms []model.Message) { ms[1].Content[0].CacheControl = &model.CacheControl{Type: "ephemeral"} }},
		{"input edited in place", func(ms []model.Message) { ms[1].Content[0].Input[len(`{"file_path":"/`)] = 'b' }},
		{"is_error flipped through its pointer", func(ms []model.Message) { *ms[2].Content[0].IsError = true }},
		{"nested block edited in place", func(ms []model.Message) { ms[2].Content[0].Blocks[0].Text = "other" }},
		{"image data changed through its pointer", func(ms []model.Message) { ms[2].Content[0].Blocks[1].Source.Data = "R0lGOD" }},
		{"block replaced", func(ms []model.Message) { ms[1].Content[0] = model.TextBlock(strings.Repeat("x", 300)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isErr, img.Data = false, strings.Repeat("iVBOR", 100)
			var e encoder
			req := &model.Request{Model: "m", Messages: history()}
			if _, err := e.encode(req); err != nil {
				t.Fatal(err)
			}
			if e.msgs.len() != 3 {
				t.Fatalf("%d entries, want 3: the test would not exercise the cache", e.msgs.len())
			}
			tt.change(req.Messages)
			got, err := e.encode(req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(marshalBody(t, req), string(got)); diff != "" {
				t.Fatalf("stale body (-json.Marshal +encode):\n%s", diff)
			}
		})
	}
}

// TestContentFieldsCompared fails when model.Content gains a field, so that
// sameContents, deepCopy and msgSnap (snapshot.go), which must know every
// field, are updated.
func TestContentFieldsCompared(t *testing.T) {
	const compared = 16 // Type Text Thinking Signature Data ID Name Input ToolUseID Blocks IsError Source ToolName CacheControl Raw + this count's own check
	if n := reflect.TypeFor[model.Content]().NumField(); n != compared-1 {
		t.Fatalf("model.Content has %d fields; sameContents, deepCopy and msgSnap handle %d: update them and this count", n, compared-1)
	}
}

// TestSystemServedFromCache shows that an equal system prompt, even in a
// new array as the loop builds it for every request, is served from the
// cache (its poisoned bytes show up in the body).
func TestSystemServedFromCache(t *testing.T) {
	var e encoder
	req := historyRequest(2, nil)
	if _, err := e.encode(req); err != nil {
		t.Fatal(err)
	}
	e.system.entries[0].json = []byte(`["poisoned"]`)
	req.System = slices.Clone(req.System)
	got, err := e.encode(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`"system":["poisoned"]`)) {
		t.Fatalf("the system prompt was encoded again, not served from the cache")
	}
}

// TestEncodeConcurrent encodes requests sharing messages, system prompt
// and tools from many goroutines (sessions sharing a provider; run with
// -race) and checks every body.
func TestEncodeConcurrent(t *testing.T) {
	var e encoder
	defs := builtinToolDefs(t)
	reqs := []*model.Request{historyRequest(12, defs), historyRequest(7, defs[2:])}
	want := []string{marshalBody(t, reqs[0]), marshalBody(t, reqs[1])}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 30 {
				k := (g + i) % 2
				got, err := e.encode(reqs[k])
				if err != nil {
					t.Error(err)
					return
				}
				if string(got) != want[k] {
					t.Errorf("goroutine %d, round %d: body of request %d differs from json.Marshal's", g, i, k)
					return
				}
			}
		})
	}
	wg.Wait()
}
