package anthropic

import (
	"testing"

	"github.com/agentloop/agentloop/model"
)

// deepMatches is what msgSnap.matches must answer: sameContents of m's
// blocks against a deep copy of the recorded message's (the last block's
// breakpoint left out on both sides when cut is set), as the history
// compared before it kept snapshots.
func deepMatches(recorded, m *model.Message, cut bool) bool {
	if recorded.Role != m.Role {
		return false
	}
	a, b := deepCopy(recorded.Content), deepCopy(m.Content)
	if cut {
		if len(a) > 0 {
			a[len(a)-1].CacheControl = nil
		}
		if len(b) > 0 {
			b[len(b)-1].CacheControl = nil
		}
	}
	return sameContents(a, b)
}

// snapVariants returns blocks that differ from each other in one field
// at a time, each field of model.Content changed at least once, nested
// blocks included, and nil told from empty where the encoding tells them.
func snapVariants() []model.Content {
	yes, no := true, false
	sealed, _ := model.Seal(model.Content{Type: model.TypeToolResult, ToolUseID: "t1", Text: string(make([]byte, model.SealMin))})
	base := model.Content{Type: model.TypeText, Text: "hello"}
	vs := []model.Content{
		base,
		{Type: model.TypeText, Text: "hellp"},
		{Type: model.TypeText, Text: "hello", CacheControl: &model.CacheControl{Type: "ephemeral"}},
		{Type: model.TypeText, Text: "hello", CacheControl: &model.CacheControl{Type: "ephemeral", TTL: "1h"}},
		{Type: model.TypeThinking, Thinking: "hmm", Signature: "sig"},
		{Type: model.TypeThinking, Thinking: "hmm", Signature: "sih"},
		{Type: model.TypeRedactedThinking, Data: "opaque"},
		{Type: model.TypeToolUse, ID: "t1", Name: "Read", Input: []byte(`{"file_path":"/a"}`)},
		{Type: model.TypeToolUse, ID: "t1", Name: "Read", Input: []byte(`{"file_path":"/b"}`)},
		{Type: model.TypeToolUse, ID: "t2", Name: "Read", Input: []byte(`{"file_path":"/a"}`)},
		{Type: model.TypeToolUse, ID: "t1", Name: "Grep", Input: []byte(`{"file_path":"/a"}`)},
		{Type: model.TypeToolUse, ID: "t1", Name: "Read", Input: []byte{}},
		{Type: model.TypeToolUse, ID: "t1", Name: "Read"},
		{Type: model.TypeToolResult, ToolUseID: "t1", Text: "ok"},
		{Type: model.TypeToolResult, ToolUseID: "t1", Text: "ok", IsError: &no},
		{Type: model.TypeToolResult, ToolUseID: "t1", Text: "ok", IsError: &yes},
		{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{}},
		{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{base}},
		{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{{Type: model.TypeText, Text: "hellp"}}},
		{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{base, base}},
		{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{{Type: model.TypeToolResult, Blocks: []model.Content{base}}}},
		sealed,
		{Type: model.TypeToolResult, ToolUseID: "t1", Raw: []byte(`{"type":"tool_result"}`)},
		{Type: model.TypeToolResult, ToolUseID: "t1", Raw: []byte{}},
		{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AAAA"}},
		{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AAAB"}},
		{Type: model.TypeImage, Source: &model.Source{Type: "url", URL: "https://example.com/a.png"}},
		{Type: model.TypeImage, Source: &model.Source{}},
		{Type: model.TypeToolReference, ToolName: "Read"},
		{Type: model.TypeToolReference, ToolName: "Grep"},
		{},
	}
	// The same texts in other strings (not shared) must compare by value.
	vs = append(vs, model.Content{Type: string([]byte("text")), Text: string([]byte("hello"))})
	return vs
}

// TestSnapshotMatchesLikeDeepCopy compares msgSnap.matches with deepMatches
// over every pair of messages built from snapVariants: one block, two,
// none, a nil list, either role, with and without the breakpoint cut.
func TestSnapshotMatchesLikeDeepCopy(t *testing.T) {
	vs := snapVariants()
	var msgs []model.Message
	for _, role := range []string{"user", "assistant"} {
		msgs = append(msgs, model.Message{Role: role}, model.Message{Role: role, Content: []model.Content{}})
		for i := range vs {
			msgs = append(msgs, model.Message{Role: role, Content: []model.Content{vs[i]}})
			msgs = append(msgs, model.Message{Role: role, Content: []model.Content{vs[0], vs[i]}})
			msgs = append(msgs, model.Message{Role: role, Content: []model.Content{vs[i], vs[2]}})
		}
	}
	pairs, same := 0, 0
	for i := range msgs {
		for _, cut := range []bool{false, true} {
			s := snapMessage(&msgs[i], cut)
			for j := range msgs {
				want := deepMatches(&msgs[i], &msgs[j], cut)
				if got := s.matches(&msgs[j], cut); got != want {
					t.Errorf("cut=%v: snapshot of %+v matches %+v: %v, want %v", cut, msgs[i], msgs[j], got, want)
				}
				pairs++
				if want {
					same++
				}
			}
		}
	}
	if same < len(msgs) || same == pairs {
		t.Fatalf("%d of %d pairs match: the variants do not exercise both answers", same, pairs)
	}
}

// TestSnapshotSeesInPlaceChanges checks that a snapshot does not share
// what a caller could change in place: a tool call's input and an
// unsealed block's raw JSON (one with text is not sealed), changed after
// the snapshot, no longer match.
func TestSnapshotSeesInPlaceChanges(t *testing.T) {
	m := model.Message{Role: "assistant", Content: []model.Content{
		{Type: model.TypeToolUse, ID: "t1", Name: "Read", Input: []byte(`{"file_path":"/a"}`)},
		{Type: model.TypeToolResult, ToolUseID: "t1", Text: "x", Raw: []byte(`{"type":"tool_result"}`)},
	}}
	for _, change := range []func(){
		func() { m.Content[0].Input[15] = 'b' },
		func() { m.Content[1].Raw[2] = 'T' },
	} {
		s := snapMessage(&m, false)
		if !s.matches(&m, false) {
			t.Fatal("a snapshot does not match its own message")
		}
		change()
		if s.matches(&m, false) {
			t.Errorf("the snapshot still matches after an in-place change: %s %s", m.Content[0].Input, m.Content[1].Raw)
		}
	}
}

// FuzzSnapshot builds two messages from the input, the second a copy of
// the first with one field changed when the last byte asks, and compares
// msgSnap.matches with deepMatches.
func FuzzSnapshot(f *testing.F) {
	f.Add([]byte("\x01\x02hello\x00"), byte(0), false)
	f.Add([]byte("\x07\x03abc\x05\x01z"), byte(9), true)
	f.Fuzz(func(t *testing.T, data []byte, change byte, cut bool) {
		vs := snapVariants()
		var a []model.Content
		for _, c := range data {
			a = append(a, vs[int(c)%len(vs)])
			if len(a) == 6 {
				break
			}
		}
		b := append([]model.Content(nil), a...)
		if len(b) > 0 && change != 0 {
			b[int(change)%len(b)] = vs[int(change)/7%len(vs)]
		}
		ma, mb := model.Message{Role: "user", Content: a}, model.Message{Role: "user", Content: b}
		s := snapMessage(&ma, cut)
		if got, want := s.matches(&mb, cut), deepMatches(&ma, &mb, cut); got != want {
			t.Fatalf("cut=%v: snapshot of %+v matches %+v: %v, want %v", cut, a, b, got, want)
		}
		if !s.matches(&ma, cut) {
			t.Fatalf("a snapshot does not match its own message %+v", a)
		}
	})
}

// benchMsgs is a history of 500 small tool calls and their results.
func benchMsgs() []model.Message {
	var msgs []model.Message
	for i := 0; i < 500; i++ {
		msgs = append(msgs, model.Message{Role: "assistant", Content: []model.Content{
			{Type: model.TypeText, Text: "Reading the file now."},
			{Type: model.TypeToolUse, ID: "toolu_0123456789", Name: "Read", Input: []byte(`{"file_path":"/project/pkg/file.go"}`)},
		}})
		msgs = append(msgs, model.Message{Role: "user", Content: []model.Content{
			{Type: model.TypeToolResult, ToolUseID: "toolu_0123456789", Text: "1\tpackage main\n2\t\n3\tfunc main() {}"},
		}})
	}
	return msgs
}

// BenchmarkMatchSnapshot is what a request pays to tell that a history of
// 1,000 messages is unchanged, with snapshots; BenchmarkMatchDeepCopy is
// the same with the deep copies they replaced, the baseline.
func BenchmarkMatchSnapshot(b *testing.B) {
	msgs := benchMsgs()
	snaps := make([]msgSnap, len(msgs))
	for i := range msgs {
		snaps[i] = snapMessage(&msgs[i], false)
	}
	b.ResetTimer()
	for range b.N {
		for i := range msgs {
			if !snaps[i].matches(&msgs[i], false) {
				b.Fatal("no match")
			}
		}
	}
}

func BenchmarkMatchDeepCopy(b *testing.B) {
	msgs := benchMsgs()
	copies := make([][]model.Content, len(msgs))
	for i := range msgs {
		copies[i] = deepCopy(msgs[i].Content)
	}
	b.ResetTimer()
	for range b.N {
		for i := range msgs {
			if !sameContents(copies[i], msgs[i].Content) {
				b.Fatal("no match")
			}
		}
	}
}
