package anthropic

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// quickCases are event data the quick readers must read, or must leave to
// encoding/json, as the case may be.
func quickCases() []string {
	return []string{
		textDelta(0, "Hello"),
		textDelta(12, "line\nnext \"quoted\" back\\slash tab\t / é ✓ 🎉"),
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a\/b\b\f\r"}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB+/="}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","text":"x"}}`,
		// Shapes left to encoding/json.
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":1}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":1234567,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","text":"y"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","type":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}` + "\n",
		"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"bad\xff\"}}",
		"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ctl\x01\"}}",
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"open}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"esc\"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"esc\q"}}`,
		blockStop(0), blockStop(7), `{"type":"content_block_stop","index":0 }`, `{"type":"content_block_stop","index":00}`,
		`{"type":"content_block_stop","index":3,"x":1}`, `{"type":"content_block_stop"}`,
		// Event types read by hand, the events then decoded whole.
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":3}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		`{"type":"message_delta" , "delta" : {} }` + "\n",
		// Left to encoding/json: another key it would read as the type.
		`{"type":"message_start","message":{},"Type":"ping"}`,
		`{"type":"message_start","message":{},"typ\u0065":"ping"}`,
		`{"type":"message_start","TYPE":"content_block_stop"}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"a}\"{"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"x"}} `,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text"]}`,
		`{"type":"message_stop"}`, `{"type":"message_start"`, `{"type":"message_start",}`, `{"type":"message_start"}x`,
	}
}

// checkQuick compares the quick readers with encoding/json on data: when a
// reader accepts data, encoding/json must read the same values from it,
// and the event's type must be the one the reader assumed.
func checkQuick(t *testing.T, data []byte) {
	t.Helper()
	var head struct {
		Type string `json:"type"`
	}
	if d, ok := readQuickDelta(data); ok {
		var ev blockDeltaEvent
		if err := json.Unmarshal(data, &ev); err != nil || json.Unmarshal(data, &head) != nil {
			t.Fatalf("readQuickDelta accepted %q, encoding/json fails: %v", data, err)
		}
		if head.Type != "content_block_delta" || ev.Index == nil || ev.Delta == nil {
			t.Fatalf("readQuickDelta accepted %q: type %q, index %v, delta %v", data, head.Type, ev.Index, ev.Delta)
		}
		fields := map[string]*string{"text": ev.Delta.Text, "partial_json": ev.Delta.PartialJSON,
			"thinking": ev.Delta.Thinking, "signature": ev.Delta.Signature}
		want := map[string]string{}
		for k, v := range fields {
			if v != nil {
				want[k] = *v
			}
		}
		got := map[string]string{d.field: d.value}
		if diff := cmp.Diff(want, got); diff != "" || d.index != *ev.Index || d.typ != ev.Delta.Type {
			t.Fatalf("readQuickDelta(%q) = %+v; encoding/json: index %d, type %q, fields (-json +quick):\n%s",
				data, d, *ev.Index, ev.Delta.Type, diff)
		}
	}
	if typ, ok := readQuickType(data); ok && json.Unmarshal(data, &head) == nil && head.Type != typ {
		t.Fatalf("readQuickType(%q) = %q; encoding/json reads type %q", data, typ, head.Type)
	}
	if i, block, ok := readQuickBlockStart(data); ok {
		// blockStart decodes the block, which fails unless it is valid
		// JSON: then so must data be.
		var ev blockStartEvent
		err := json.Unmarshal(data, &ev)
		if json.Valid(block) != (err == nil) {
			t.Fatalf("readQuickBlockStart(%q): block %s valid: %v; the event decodes with %v", data, block, json.Valid(block), err)
		}
		if err == nil && (json.Unmarshal(data, &head) != nil || head.Type != "content_block_start" || ev.Index == nil || *ev.Index != i || string(ev.ContentBlock) != string(block)) {
			t.Fatalf("readQuickBlockStart(%q) = %d, %s; encoding/json: type %q, index %v, block %s", data, i, block, head.Type, ev.Index, ev.ContentBlock)
		}
	}
	if i, ok := readQuickStop(data); ok {
		var ev blockStopEvent
		if err := json.Unmarshal(data, &ev); err != nil || json.Unmarshal(data, &head) != nil {
			t.Fatalf("readQuickStop accepted %q, encoding/json fails: %v", data, err)
		}
		if head.Type != "content_block_stop" || ev.Index == nil || *ev.Index != i {
			t.Fatalf("readQuickStop(%q) = %d; encoding/json: type %q, index %v", data, i, head.Type, ev.Index)
		}
	}
}

// TestQuickReaders shows that the quick readers read what they accept as
// encoding/json reads it, and accept the common shapes (so the fast path
// is taken at all).
func TestQuickReaders(t *testing.T) {
	for _, c := range quickCases() {
		checkQuick(t, []byte(c))
	}
	for _, c := range quickCases()[:7] {
		if _, ok := readQuickDelta([]byte(c)); !ok {
			t.Errorf("readQuickDelta rejected %s", c)
		}
	}
	for _, c := range quickCases()[7:21] {
		if d, ok := readQuickDelta([]byte(c)); ok {
			t.Errorf("readQuickDelta accepted %q as %+v; it should leave it to encoding/json", c, d)
		}
	}
	for i, c := range quickCases() {
		_, ok := readQuickType([]byte(c))
		if want := i >= 27 && i < 31 || i >= 34 && i < 38; ok != want { // the four type cases, the four block starts
			t.Errorf("readQuickType(%s) ok = %v, want %v", c, ok, want)
		}
	}
	for _, c := range []string{quickCases()[28], quickCases()[34], quickCases()[35]} {
		if _, _, ok := readQuickBlockStart([]byte(c)); !ok {
			t.Errorf("readQuickBlockStart rejected %s", c)
		}
	}
	if _, ok := readQuickStop([]byte(blockStop(7))); !ok {
		t.Errorf("readQuickStop rejected %s", blockStop(7))
	}
}

func FuzzQuickReaders(f *testing.F) {
	for _, c := range quickCases() {
		f.Add([]byte(c))
	}
	f.Fuzz(checkQuick)
}

// TestQuickReadersMutated runs checkQuick on many random edits of the
// cases (bytes changed, inserted, deleted): a cheap stand-in for the fuzzer
// that runs with every test run.
func TestQuickReadersMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,\/0123456789-abnrtuxe_ "` + "\x00\x1f\xff\xc3\xa9")
	cases := quickCases()
	for range 20000 {
		b := []byte(cases[rng.IntN(len(cases))])
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			switch rng.IntN(3) {
			case 0:
				if i < len(b) {
					b[i] = c
				}
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 2:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			}
		}
		checkQuick(t, b)
	}
}
