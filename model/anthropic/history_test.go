package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// memoSession is a session as the loop keeps one: a history it changes
// between requests, and a memo its requests carry.
type memoSession struct {
	memo    model.Memo
	history []model.Message
	cc      *model.CacheControl // the breakpoint put on the last block
	ctxMgmt *model.ContextManagement
	seal    bool // bigTurn's results are sealed, as the loop seals them
}

// request builds the next request as the loop does: the history copied,
// the last message's blocks copied with a breakpoint on the last one.
func (s *memoSession) request() *model.Request {
	msgs := append([]model.Message(nil), s.history...)
	if n := len(msgs); n > 0 && len(msgs[n-1].Content) > 0 && s.cc != nil {
		blocks := append([]model.Content(nil), msgs[n-1].Content...)
		blocks[len(blocks)-1].CacheControl = s.cc
		msgs[n-1] = model.Message{Role: msgs[n-1].Role, Content: blocks}
	}
	return &model.Request{Model: "claude-opus-5-5", MaxTokens: 1000, Messages: msgs, Memo: &s.memo,
		System: []model.Content{{Type: model.TypeText, Text: "sys", CacheControl: s.cc}}, ContextManagement: s.ctxMgmt}
}

// turn adds a tool call and its result, small ones, as a session of small
// tool calls does.
func (s *memoSession) turn(k int) {
	id := fmt.Sprintf("toolu_%d", k)
	s.history = append(s.history,
		model.Message{Role: "assistant", Content: []model.Content{
			model.TextBlock("Reading."),
			{Type: model.TypeToolUse, ID: id, Name: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path": "/r/<%d>.go"}`, k))}}},
		model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: id, Text: fmt.Sprintf("line %d\n", k)}}})
}

// bigTurn adds a tool call whose result is a file of n numbered lines, a
// few KB as a Read of a source file returns, so that histories outgrow a
// chunk of the memo.
func (s *memoSession) bigTurn(k, n int) {
	id := fmt.Sprintf("toolu_big_%d", k)
	var text strings.Builder
	for i := range n {
		fmt.Fprintf(&text, "%6d\tfunc f%d() { return \"<%d>\" }\n", i+1, i, k)
	}
	s.history = append(s.history,
		model.Message{Role: "assistant", Content: []model.Content{
			{Type: model.TypeToolUse, ID: id, Name: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path":"/r/big%d.go"}`, k))}}},
		model.Message{Role: "user", Content: []model.Content{s.result(model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: text.String()})}})
}

// result is c as the loop puts it in the history: sealed when s.seal is
// set and c is large enough.
func (s *memoSession) result(c model.Content) model.Content {
	if s.seal {
		c, _ = model.Seal(c)
	}
	return c
}

// freshBody is json.Marshal's body for req with every sealed block read
// back to its text: what the API would get from a loop that seals nothing.
func freshBody(t *testing.T, req *model.Request) string {
	t.Helper()
	r := *req
	var err error
	if r.Messages, err = model.UnsealMessages(r.Messages); err != nil {
		t.Fatal(err)
	}
	if model.HasSealed(r.Messages) {
		t.Fatal("still sealed")
	}
	return marshalBody(t, &r)
}

// TestHistoryMatchesFresh sends a session's requests with a memo after each
// way the loop changes a history (a turn, compaction, /clear, a rewind,
// messages edited in place or replaced, context management, breakpoints
// of every kind) and compares each body with a fresh encoding, byte for
// byte, and counts the messages encoded: those the last request sent, when
// unchanged, are not encoded again.
func TestHistoryMatchesFresh(t *testing.T) {
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Fix the bug.")}}}
	steps := []struct {
		name    string
		change  func()
		encoded int // messages encoded for the request; -1: all
	}{
		{"first prompt", func() {}, 1},
		{"a turn", func() { s.turn(1) }, 2},
		{"more turns", func() { s.turn(2); s.turn(3) }, 4},
		{"same again (a retry)", func() {}, 0},
		{"text edited in place", func() { s.history[1].Content[0].Text = "Reading <it>." }, 6},
		{"turn after edit", func() { s.turn(4) }, 2},
		{"input edited in place", func() { s.history[3].Content[1].Input[3] = 'F' }, 6},
		{"is_error set in place", func() { f := true; s.history[4].Content[0].IsError = &f }, 5},
		{"block appended to an earlier message", func() {
			s.history[2].Content = append(s.history[2].Content, model.TextBlock("and more"))
		}, 7},
		{"message replaced", func() {
			s.history[6] = model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "toolu_3", Text: "cleared"}}}
		}, 3},
		{"rewind", func() { s.history = s.history[:3] }, 0},
		{"turn after rewind", func() { s.turn(5) }, 2},
		{"compaction", func() {
			s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Summary: the bug is in step 3."), model.TextBlock("Go on.")}}}
		}, 1},
		{"turn after compaction", func() { s.turn(6) }, 2},
		{"clear", func() {
			s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("New task.")}}}
		}, 1},
		{"turn after clear", func() { s.turn(7) }, 2},
		{"context management", func() {
			s.ctxMgmt = &model.ContextManagement{Edits: []model.ContextEdit{{Type: model.EditClearToolUses, ClearAllToolInputs: true}}}
			s.turn(8)
		}, 2},
		{"breakpoint with a ttl", func() { s.cc = &model.CacheControl{Type: "ephemeral", TTL: "1h"}; s.turn(9) }, 2},
		{"breakpoint on an earlier message", func() {
			s.history[2].Content[0].CacheControl = &model.CacheControl{Type: "ephemeral"}
			s.turn(10)
		}, 7},
		{"no breakpoint", func() { s.cc = nil; s.turn(11) }, 2}, // the last message, without breakpoint, is not kept
		{"no breakpoint again", func() { s.turn(12) }, 3},
		{"breakpoint back", func() { s.cc = &model.CacheControl{Type: "ephemeral"}; s.turn(13) }, 3},
		{"last block of an unmodelled type", func() {
			s.history = append(s.history, model.Message{Role: "user", Content: []model.Content{
				{Type: "mystery", Raw: json.RawMessage(`{"type":"mystery","x":1}`)}}})
		}, 1},
		{"turn after it", func() { s.turn(14) }, 3},
		{"empty content", func() {
			s.history = append(s.history, model.Message{Role: "user", Content: []model.Content{}})
		}, 1},
		{"nil content", func() { s.history = append(s.history, model.Message{Role: "user"}) }, 2},
		{"turns past a chunk", func() { s.bigTurn(1, 60); s.bigTurn(2, 60) }, 5},
		{"a result larger than the largest chunk", func() { s.bigTurn(3, 1500) }, 2},
		{"more after it", func() { s.bigTurn(4, 100); s.turn(15) }, 4},
		{"rewind into an early chunk", func() { s.history = s.history[:len(s.history)-6] }, 0},
		{"turn after that rewind", func() { s.bigTurn(5, 80) }, 2},
		{"sealed results", func() { s.seal = true; s.bigTurn(6, 80) }, 2},
		{"more of them", func() { s.bigTurn(7, 60); s.turn(16); s.bigTurn(8, 40) }, 6},
		{"same again, sealed", func() {}, 0},
		{"sealed result larger than a chunk", func() { s.bigTurn(9, 400) }, 2},
		{"sealed result with text after it", func() {
			n := len(s.history) - 1
			s.history[n].Content = append(s.history[n].Content, model.TextBlock("<system-reminder>note</system-reminder>"))
		}, 1},
		{"sealed result unsealed in place", func() {
			n := len(s.history) - 3
			u, err := model.Unseal(s.history[n].Content[0])
			if err != nil {
				t.Fatal(err)
			}
			s.history[n].Content[0] = u
		}, 3},
		{"rewind into sealed results", func() { s.history = s.history[:len(s.history)-5] }, 0},
		{"turn after it, breakpoint moved off", func() { s.turn(17) }, 2},
		{"no breakpoint, sealed last", func() { s.cc = nil; s.bigTurn(10, 50) }, 2},
		{"breakpoint back, sealed last", func() { s.cc = &model.CacheControl{Type: "ephemeral"}; s.bigTurn(11, 50) }, 3},
		{"role changed", func() { s.history[0].Role = "assistant" }, -1}, // all of them
	}
	for _, st := range steps {
		st.change()
		req := s.request()
		fresh := freshBody(t, req)
		var e encoder
		got, err := e.encode(req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(fresh, string(got)); diff != "" {
			t.Fatalf("%s (-fresh +incremental):\n%s", st.name, diff)
		}
		h, _ := s.memo.Take().(*history)
		if h == nil {
			t.Fatalf("%s: nothing kept in the memo", st.name)
		}
		want := st.encoded
		if want < 0 {
			want = len(req.Messages)
		}
		if h.encoded != want {
			t.Errorf("%s: %d messages encoded, want %d", st.name, h.encoded, want)
		}
		h.encoded = 0
		s.memo.Put(h)
	}
}

// TestHistoryKeepsSharedBytes shows that a body's bytes stay as they were
// when the memo's history is cut back and grows again: the old body shares
// the memo's buffer, which must not be written over.
func TestHistoryKeepsSharedBytes(t *testing.T) {
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Fix the bug.")}}}
	for k := range 4 {
		s.turn(k)
		s.bigTurn(k, 30)
	}
	var e encoder
	old, err := e.body(s.request())
	if err != nil {
		t.Fatal(err)
	}
	want := string(old.bytes())
	for _, cut := range []int{11, 5, 3} { // within the last chunk, an earlier one, the first
		s.history = s.history[:cut]
		for k := range 4 {
			s.turn(10 + k)
			s.bigTurn(10+k, 25)
			if _, err := e.body(s.request()); err != nil {
				t.Fatal(err)
			}
		}
		if got := string(old.bytes()); got != want {
			t.Fatalf("cut at %d: an earlier body changed:\n%s", cut, cmp.Diff(want, got))
		}
	}
}

// TestHistoryChunks shows that a long history is kept without outgrown
// buffers: its chunks are never reallocated and each is filled before the
// next, messages spanning them, so its spare capacity stays under one
// chunk whatever its length, and a request's body shares each chunk as it
// is.
func TestHistoryChunks(t *testing.T) {
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Go.")}}}
	var e encoder
	for k := range 200 {
		if k%3 == 0 {
			s.bigTurn(k, 40)
		} else {
			s.turn(k)
		}
		req := s.request()
		got, err := e.encode(req)
		if err != nil {
			t.Fatal(err)
		}
		if k%50 == 0 {
			if diff := cmp.Diff(marshalBody(t, req), string(got)); diff != "" {
				t.Fatalf("turn %d (-fresh +incremental):\n%s", k, diff)
			}
		}
	}
	h, _ := s.memo.Take().(*history)
	if h == nil {
		t.Fatal("nothing kept in the memo")
	}
	used, held := 0, 0
	for _, c := range h.chunks {
		used += len(c)
		held += cap(c)
	}
	if used != h.size() || used < 150_000 {
		t.Fatalf("%d bytes in chunks, size %d: want the history's JSON, over 150 KB", used, h.size())
	}
	if spare := held - used; spare >= chunkSize {
		t.Errorf("%d bytes of spare capacity for a history of %d: want less than a chunk (%d)", spare, used, chunkSize)
	}
	for k, c := range h.chunks {
		if cap(c) != chunkSize {
			t.Errorf("chunk %d holds %d bytes, want %d", k, cap(c), chunkSize)
		}
		if k < len(h.chunks)-1 && len(c) != cap(c) {
			t.Errorf("chunk %d is filled to %d of %d bytes before the next", k, len(c), cap(c))
		}
	}
}

// TestHistoryInvalidInput shows that a tool input that is not JSON fails
// the request naming the message, and leaves a memo the next request can
// use.
func TestHistoryInvalidInput(t *testing.T) {
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Go.")}}}
	s.turn(1)
	var e encoder
	if _, err := e.encode(s.request()); err != nil {
		t.Fatal(err)
	}
	s.turn(2)
	s.history[3].Content[1].Input = json.RawMessage(`{"file_path":`)
	if _, err := e.encode(s.request()); err == nil || !strings.Contains(err.Error(), "message 3") {
		t.Fatalf("err = %v, want one naming message 3", err)
	}
	s.history[3].Content[1].Input = json.RawMessage(`{}`)
	req := s.request()
	got, err := e.encode(req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(marshalBody(t, req), string(got)); diff != "" {
		t.Fatalf("(-fresh +incremental):\n%s", diff)
	}
}

// BenchmarkHistoryGrowth encodes the requests of a session of 40 tool
// turns that read files of 120 lines (≈ 5 KB each), through its memo: the
// cost of growing a history that only grows. B/op is what all the
// requests allocated, the kept history included.
func BenchmarkHistoryGrowth(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
		s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Look around.")}}}
		var e encoder
		for k := range 40 {
			s.bigTurn(k, 120)
			if _, err := e.body(s.request()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestHistorySharesSealed shows that the memo holds a sealed result's JSON
// by reference: every sealed block of the session's history is one of the
// memo's chunks, the very bytes, and what the memo owns besides is the
// rest of the JSON with little spare capacity.
func TestHistorySharesSealed(t *testing.T) {
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}, seal: true}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Go.")}}}
	var e encoder
	for k := range 30 {
		if k%3 == 2 {
			s.turn(k)
		} else {
			s.bigTurn(k, 30+k*7)
		}
		req := s.request()
		got, err := e.encode(req)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(freshBody(t, req), string(got)); diff != "" {
			t.Fatalf("turn %d (-fresh +incremental):\n%s", k, diff)
		}
	}
	h, _ := s.memo.Take().(*history)
	if h == nil {
		t.Fatal("nothing kept in the memo")
	}
	chunks := map[*byte]bool{}
	for _, c := range h.chunks {
		chunks[unsafe.SliceData(c)] = true
	}
	sealedJSON := map[*byte]bool{}
	for _, m := range s.history {
		for _, c := range m.Content {
			if !c.Sealed() {
				continue
			}
			sealedJSON[unsafe.SliceData(c.Raw)] = true
			if !chunks[unsafe.SliceData(c.Raw)] {
				t.Errorf("sealed result %s is not shared: the memo holds a copy", c.ToolUseID)
			}
		}
	}
	if len(sealedJSON) != 20 {
		t.Fatalf("%d sealed results, want 20", len(sealedJSON))
	}
	all, own, spare := 0, 0, 0
	for _, c := range h.chunks {
		all += len(c)
		if sealedJSON[unsafe.SliceData(c)] {
			continue
		}
		own += len(c)
		spare += cap(c) - len(c)
	}
	if all != h.size() {
		t.Fatalf("chunks hold %d bytes, the history %d", all, h.size())
	}
	// Only the last chunk's spare shows: the others are clipped.
	if spare > smallChunkSize {
		t.Errorf("%d bytes of spare capacity after a sealed result, want at most %d", spare, smallChunkSize)
	}
	t.Logf("%d bytes in all, %d the memo's own, %d spare", all, own, spare)
}
