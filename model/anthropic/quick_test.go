package anthropic

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/internal/quickev"
	"github.com/agentloop/agentloop/model"
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

// messageCases are message_start and message_delta events: the shapes the
// API sends, which the quick readers must take, then shapes they must leave
// to encoding/json (white space, null counts, repeated or differently
// cased keys, escapes, unknown keys, numbers of other forms).
func messageCases() (quick, general []string) {
	quick = []string{
		`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":400,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`,
		`{"type":"message_start","message":{"model":"m","id":"msg_\\2","type":"message","role":"assistant","content":[],"stop_reason":"end_turn","stop_sequence":"STOP","usage":{"input_tokens":3,"cache_creation_input_tokens":12,"cache_read_input_tokens":7,"cache_creation":{"ephemeral_5m_input_tokens":12,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","server_tool_use":{"web_search_requests":2,"web_fetch_requests":1},"inference_geo":"us"}}}`,
		`{"type":"message_start","message":{"id":"msg_3","usage":{}}}`,
		`{"type":"message_start","message":{}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":400,"output_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9,"cache_creation":{"ephemeral_1h_input_tokens":4},"server_tool_use":{"web_search_requests":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"\n\nHuman:"},"usage":{"output_tokens":2}}`,
		`{"type":"message_delta","delta":{}}`,
	}
	general = []string{
		`{"type":"message_start", "message":{"id":"msg_1"}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":null}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"input_tokens":2}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"Input_Tokens":5}}}`,
		`{"type":"message_start","message":{"id":"msg_1","ID":"msg_2"}}`,
		`{"type":"message_start","message":{"id":"msg_\u0031"}}`,
		`{"type":"message_start","message":{"id":"msg_1","container":{"id":"c"}}}`,
		`{"type":"message_start","message":{"id":"msg_1","content":[{"type":"text","text":""}]}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1.0}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":-1}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":01}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1e3}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":9999999999999999999}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"cache_creation":null}}}`,
		`{"type":"message_start","message":{"id":"msg_1","usage":{"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_5m_input_tokens":2}}}}`,
		`{"type":"message_start","message":null}`,
		`{"type":"message_start"}`,
		`{"type":"message_start","message":{"id":"msg_1"},"message":{"id":"msg_2"}}`,
		`{"type":"message_start","message":{"id":"msg_1"}} `,
		`{"type":"message_start","message":{"id":"msg_1","stop_reason":5}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":null}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":null}`,
		`{"type":"message_delta","delta":null,"usage":{"output_tokens":1}}`,
		`{"type":"message_delta","usage":{"output_tokens":1}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","Stop_Reason":"x"}}`,
		`{"type":"message_delta","delta":{"stop_sequence":7}}`,
		`{"type":"message_delta","delta":{},"usage":{"output_tokens":1},"usage":{"input_tokens":2}}`,
		`{"type":"message_delta","delta":{},"usage":{"output_tokens":1,}}`,
		`{"type":"message_delta","delta":{},"usage":{"output_tokens":1}`,
	}
	return quick, general
}

// checkMessage compares the quick message_start and message_delta paths
// with encoding/json's on data: accepted, they give what encoding/json
// gives; declined, the caller's fallback is encoding/json itself.
func checkMessage(t *testing.T, data []byte) (quickStart, quickDelta bool) {
	t.Helper()
	if st, ok := quickev.ReadStart(data); ok {
		quickStart = true
		want, err := decodeStart(data)
		if err != nil {
			t.Fatalf("quickev.ReadStart accepted %q, encoding/json fails: %v", data, err)
		}
		if diff := cmp.Diff(want, st); diff != "" {
			t.Fatalf("quickev.ReadStart(%q) (-json +quick):\n%s", data, diff)
		}
	}
	// A reply's usage so far, with nested objects that a delta merges into.
	seq := "END"
	base := model.Response{StopReason: "x", StopSequence: &seq, Usage: model.Usage{InputTokens: 5, OutputTokens: 1,
		CacheCreation: &model.CacheCreation{Ephemeral5mInputTokens: 3},
		ServerToolUse: &model.ServerToolUse{WebFetchRequests: 2}, ServiceTier: "standard"}}
	if d, ok := quickev.ReadMessageDelta(data); ok {
		u := cloneUsage(base.Usage)
		if d.Usage == nil || quickev.ReadUsage(d.Usage, &u) {
			quickDelta = true
		}
	}
	want, werr := decodeMessageDelta(base, data)
	before := cloneUsage(base.Usage)
	got := base
	gerr := applyMessageDelta(&got, data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("message_delta %q: encoding/json error %v, quick path error %v", data, werr, gerr)
	}
	if werr == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("message_delta %q (-json +quick):\n%s", data, diff)
		}
	}
	if diff := cmp.Diff(before, base.Usage); diff != "" {
		t.Fatalf("message_delta %q changed the usage it was given (-before +after):\n%s", data, diff)
	}
	return quickStart, quickDelta
}

// TestQuickMessageEvents: the API's shapes take the quick path, the others
// do not, and both read as encoding/json does.
func TestQuickMessageEvents(t *testing.T) {
	quick, general := messageCases()
	for _, c := range quick {
		s, d := checkMessage(t, []byte(c))
		if !s && !d {
			t.Errorf("neither quick reader took %s", c)
		}
	}
	for _, c := range general {
		if s, d := checkMessage(t, []byte(c)); s || d {
			t.Errorf("a quick reader took %s (start %v, delta %v); it should be left to encoding/json", c, s, d)
		}
	}
}

func FuzzQuickMessageEvents(f *testing.F) {
	quick, general := messageCases()
	for _, c := range append(quick, general...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkMessage(t, data) })
}

// TestQuickMessageEventsMutated is FuzzQuickMessageEvents on random edits
// of the cases, for every test run.
func TestQuickMessageEventsMutated(t *testing.T) {
	quick, general := messageCases()
	cases := append(quick, general...)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`{}[]":,\/0123456789-abnrtuxe_ "` + "\x00\x1f\xff\xc3\xa9")
	for range 20000 {
		b := mutate(rng, []byte(cases[rng.IntN(len(cases))]), alphabet)
		checkMessage(t, b)
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
		b := mutate(rng, []byte(cases[rng.IntN(len(cases))]), alphabet)
		checkQuick(t, b)
	}
}

// mutate makes one to three random edits of b (a byte changed, inserted
// or deleted) from alphabet.
func mutate(rng *rand.Rand, b, alphabet []byte) []byte {
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
	return b
}
