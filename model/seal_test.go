package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// readText is a result as Read returns one: numbered lines with tabs,
// quotes and markup, n bytes or a little more.
func readText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d\tif x < %d && y > \"%d\" { return `\\n` }\n", i, i, i)
	}
	return b.String()
}

func boolPtr(v bool) *bool { return &v }

// TestSeal checks which blocks are sealed, and that a sealed block writes
// exactly the JSON of the block it was, with or without a breakpoint,
// alone or in a message, and reads back to it.
func TestSeal(t *testing.T) {
	big := readText(3 * SealMin)
	cc := &CacheControl{Type: "ephemeral", TTL: "1h"}
	cases := []struct {
		name string
		c    Content
		seal bool
	}{
		{"large text result", Content{Type: TypeToolResult, ToolUseID: "toolu_1", Text: big}, true},
		{"large error result", Content{Type: TypeToolResult, ToolUseID: "toolu_2", Text: big, IsError: boolPtr(true)}, true},
		{"with a breakpoint", Content{Type: TypeToolResult, ToolUseID: "toolu_3", Text: big, CacheControl: cc}, true},
		{"exactly SealMin", Content{Type: TypeToolResult, ToolUseID: "toolu_4", Text: strings.Repeat("a", SealMin)}, true},
		{"invalid UTF-8 and controls", Content{Type: TypeToolResult, ToolUseID: "toolu_5", Text: big + "\xff\x01\u2028"}, true},
		{"small result", Content{Type: TypeToolResult, ToolUseID: "toolu_6", Text: strings.Repeat("a", SealMin-1)}, false},
		{"result of blocks", Content{Type: TypeToolResult, ToolUseID: "toolu_7", Blocks: []Content{TextBlock(big)}}, false},
		{"text block", TextBlock(big), false},
		{"sealed already", Content{Type: TypeToolResult, ToolUseID: "toolu_8", Raw: json.RawMessage(`{"tool_use_id":"toolu_8","type":"tool_result","content":"x"}`)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := tc.c.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := Seal(tc.c)
			if ok != tc.seal {
				t.Fatalf("sealed %v, want %v", ok, tc.seal)
			}
			if !ok {
				if diff := cmp.Diff(tc.c, s); diff != "" {
					t.Fatalf("a block not sealed changed (-was +now):\n%s", diff)
				}
				return
			}
			if !s.Sealed() || s.Text != "" || s.ToolUseID != tc.c.ToolUseID || s.IsError != tc.c.IsError || s.CacheControl != tc.c.CacheControl {
				t.Fatalf("sealed block %+v", s)
			}
			if cap(s.Raw) != len(s.Raw) {
				t.Errorf("sealed JSON has %d spare bytes", cap(s.Raw)-len(s.Raw))
			}
			got, err := s.AppendJSON([]byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("x"+string(want), string(got)); diff != "" {
				t.Errorf("AppendJSON (-unsealed +sealed):\n%s", diff)
			}
			if m, err := json.Marshal(s); err != nil || string(m) != string(want) {
				t.Errorf("Marshal = %s, %v; want the unsealed block's JSON", m, err)
			}
			msg := Message{Role: "user", Content: []Content{TextBlock("before"), s, TextBlock("after")}}
			plain := Message{Role: "user", Content: []Content{TextBlock("before"), tc.c, TextBlock("after")}}
			wantMsg, _ := plain.AppendJSON(nil)
			if gotMsg, err := msg.AppendJSON(nil); err != nil || string(gotMsg) != string(wantMsg) {
				t.Errorf("message AppendJSON differs: %v", err)
			}
			// Read back, the block is what decoding its JSON gives.
			var decoded Content
			if err := decoded.UnmarshalJSON(want); err != nil {
				t.Fatal(err)
			}
			decoded.CacheControl = tc.c.CacheControl
			u, err := Unseal(s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decoded, u); diff != "" {
				t.Errorf("Unseal (-decoded +unsealed):\n%s", diff)
			}
			if u.Sealed() || s.ResultText() != decoded.Text {
				t.Errorf("unsealed block still sealed, or ResultText differs")
			}
		})
	}
}

// TestAppendJSONShared checks that a message written with its sealed
// blocks shared is, put together, the message's JSON, and that share gets
// the sealed block's own bytes, not a copy.
func TestAppendJSONShared(t *testing.T) {
	a, _ := Seal(Content{Type: TypeToolResult, ToolUseID: "toolu_a", Text: readText(2 * SealMin)})
	b, _ := Seal(Content{Type: TypeToolResult, ToolUseID: "toolu_b", Text: readText(SealMin), IsError: boolPtr(false)})
	withBreakpoint := b
	withBreakpoint.CacheControl = &CacheControl{Type: "ephemeral"}
	cases := []struct {
		name   string
		blocks []Content
		shared int
	}{
		{"one sealed block", []Content{a}, 1},
		{"two, with text between", []Content{a, TextBlock("between"), b}, 2},
		{"sealed block with a breakpoint is written, not shared", []Content{a, withBreakpoint}, 1},
		{"nothing sealed", []Content{TextBlock("plain")}, 0},
		{"empty", []Content{}, 0},
		{"nil", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Message{Role: "user", Content: tc.blocks}
			want, err := m.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			var whole []byte
			shared := 0
			rest, err := m.AppendJSONShared([]byte(","), func(dst, block []byte) []byte {
				whole = append(whole, dst...)
				whole = append(whole, block...)
				if unsafe.SliceData(block) != unsafe.SliceData(a.Raw) && unsafe.SliceData(block) != unsafe.SliceData(b.Raw) {
					t.Errorf("share got a copy of a sealed block")
				}
				shared++
				return dst[:0]
			})
			if err != nil {
				t.Fatal(err)
			}
			whole = append(whole, rest...)
			if diff := cmp.Diff(","+string(want), string(whole)); diff != "" {
				t.Errorf("pieces put together (-AppendJSON +shared):\n%s", diff)
			}
			if shared != tc.shared {
				t.Errorf("%d blocks shared, want %d", shared, tc.shared)
			}
		})
	}
}

// TestUnsealMessages checks that unsealing copies only what it changes and
// leaves its input as it was.
func TestUnsealMessages(t *testing.T) {
	text := readText(SealMin)
	s, _ := Seal(Content{Type: TypeToolResult, ToolUseID: "toolu_1", Text: text})
	msgs := []Message{
		{Role: "user", Content: []Content{TextBlock("prompt")}},
		{Role: "assistant", Content: []Content{{Type: TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{}`)}}},
		{Role: "user", Content: []Content{s, TextBlock("note")}},
	}
	if !HasSealed(msgs) || HasSealed(msgs[:2]) {
		t.Fatal("HasSealed wrong")
	}
	before := fmt.Sprintf("%+v", msgs)
	out, err := UnsealMessages(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%+v", msgs); got != before {
		t.Fatal("UnsealMessages changed its input")
	}
	if out[2].Content[0].Text != text || out[2].Content[0].Sealed() || HasSealed(out) {
		t.Fatalf("not unsealed: %+v", out[2].Content[0])
	}
	if &out[0].Content[0] != &msgs[0].Content[0] {
		t.Error("a message without sealed blocks was copied")
	}
	if same, _ := UnsealMessages(msgs[:2]); &same[0] != &msgs[0] {
		t.Error("messages without sealed blocks were copied")
	}
	bad := []Message{{Role: "user", Content: []Content{{Type: TypeToolResult, ToolUseID: "toolu_x", Raw: json.RawMessage(`{"type":"tool_result","content":[]}`)}}}}
	if _, err := UnsealMessages(bad); !errors.Is(err, errSealShape) {
		t.Errorf("a sealed block of blocks: err %v", err)
	}
	if _, err := bad[0].AppendJSON(nil); err != nil {
		t.Errorf("its JSON is still written: %v", err)
	}
	// Raw beside text is not a sealed block: the text is what goes.
	both := Content{Type: TypeToolResult, ToolUseID: "toolu_z", Text: "the text", Raw: json.RawMessage(`{"other":1}`)}
	want, _ := (&Content{Type: TypeToolResult, ToolUseID: "toolu_z", Text: "the text"}).AppendJSON(nil)
	if got, err := both.AppendJSON(nil); both.Sealed() || err != nil || string(got) != string(want) {
		t.Errorf("a result with text and Raw: sealed %v, wrote %s, %v; want %s", both.Sealed(), got, err, want)
	}
	broken := Content{Type: TypeToolResult, ToolUseID: "toolu_y", Raw: json.RawMessage(`"text"`)}
	if _, err := broken.AppendJSON(nil); !errors.Is(err, errSealShape) {
		t.Errorf("sealed JSON that is not an object: err %v", err)
	}
}

// FuzzSeal checks, for any text, that a sealed result writes the bytes
// the unsealed one does, with a breakpoint too, and reads back to what
// decoding those bytes gives.
func FuzzSeal(f *testing.F) {
	f.Add(readText(SealMin), false)
	f.Add(strings.Repeat("\x00\"\\<>&\u2028\xff", 200), true)
	f.Fuzz(func(t *testing.T, text string, isError bool) {
		text = strings.Repeat(text+"x", SealMin/(len(text)+1)+1)
		c := Content{Type: TypeToolResult, ToolUseID: "toolu_f", Text: text, CacheControl: &CacheControl{Type: "ephemeral"}}
		if isError {
			c.IsError = &isError
		}
		want, err := c.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := Seal(c)
		if !ok {
			t.Fatal("not sealed")
		}
		got, err := s.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("sealed JSON differs: %v", err)
		}
		var decoded Content
		if err := decoded.UnmarshalJSON(want); err != nil {
			t.Fatal(err)
		}
		u, err := Unseal(s)
		if err != nil || u.Text != decoded.Text {
			t.Fatalf("read back %q, want %q (%v)", u.Text, decoded.Text, err)
		}
	})
}
