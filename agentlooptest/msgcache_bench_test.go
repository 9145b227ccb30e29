package agentlooptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// sessionMark is the placeholder sessionBodies writes into every message
// so that a benchmark can turn one session into another by rewriting it.
const sessionMark = "S#000000"

// sessionBodies returns the bodies of one agent session of six requests,
// as agentloop sends them: the same tools and system prompt every time,
// the whole history of the previous request plus an assistant turn (text
// and a tool call) and a user turn (its result, a few KB of file), the
// cache_control breakpoint on the last block of the last message only.
// Every message holds sessionMark.
func sessionBodies(t testing.TB) [][]byte {
	t.Helper()
	tools := make([]model.ToolDef, 0, 12)
	for i := range 12 {
		tools = append(tools, model.ToolDef{Name: fmt.Sprintf("Tool%d", i), Description: strings.Repeat("describes the tool. ", 30),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("an argument ", 20) + `"}},"required":["a"]}`)})
	}
	system := []model.Content{
		model.TextBlock("You are an agent. " + strings.Repeat("Follow the rules. ", 100)),
		{Type: model.TypeText, Text: "env", CacheControl: &model.CacheControl{Type: "ephemeral"}},
	}
	file := strings.Repeat("func f() { return \"x\" }\n\tline of a file\n", 60)
	msgs := []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(sessionMark + " Read the files and tell me what they do.")}}}
	var bodies [][]byte
	for turn := range 6 {
		req := model.Request{Model: "claude-sonnet-4-5", MaxTokens: 32000, Stream: true, System: system, Tools: tools,
			Metadata: &model.Metadata{UserID: "user_" + sessionMark}}
		req.Messages = make([]model.Message, len(msgs))
		for i, m := range msgs {
			req.Messages[i] = model.Message{Role: m.Role, Content: append([]model.Content(nil), m.Content...)}
		}
		last := req.Messages[len(req.Messages)-1].Content
		last[len(last)-1].CacheControl = &model.CacheControl{Type: "ephemeral"}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
		id := fmt.Sprintf("toolu_%s_%d", sessionMark, turn)
		msgs = append(msgs,
			model.Message{Role: "assistant", Content: []model.Content{
				{Type: model.TypeThinking, Thinking: "I should read file " + fmt.Sprint(turn), Signature: strings.Repeat("c2ln", 40)},
				model.TextBlock("Reading file " + fmt.Sprint(turn) + " of " + sessionMark + "."),
				{Type: model.TypeToolUse, ID: id, Name: "Tool0", Input: json.RawMessage(`{"a":"/src/` + sessionMark + `/f` + fmt.Sprint(turn) + `.go"}`)},
			}},
			model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: id, Text: file}}},
		)
	}
	return bodies
}

// renumber writes n into every sessionMark of the bodies.
func renumber(bodies [][]byte, marks [][]int, n int) {
	num := fmt.Appendf(nil, "S#%06d", n%1000000)
	for i, b := range bodies {
		for _, at := range marks[i] {
			copy(b[at:], num)
		}
	}
}

// markOffsets returns where sessionMark is in each body.
func markOffsets(bodies [][]byte) [][]int {
	marks := make([][]int, len(bodies))
	for i, b := range bodies {
		for off := 0; ; {
			n := bytes.Index(b[off:], []byte(sessionMark))
			if n < 0 {
				break
			}
			marks[i] = append(marks[i], off+n)
			off += n + len(sessionMark)
		}
	}
	return marks
}

// BenchmarkDecodeHistory decodes the six requests of one agent session
// per op, each op a new session (its messages rewritten), as a server sees
// many sessions: every message is new on its first request and repeated
// by the later ones, byte for byte except for the breakpoint's move.
// "plain" is decodeParams, "server" the server's decoder.
func BenchmarkDecodeHistory(b *testing.B) {
	bodies := sessionBodies(b)
	marks := markOffsets(bodies)
	total := 0
	for _, body := range bodies {
		total += len(body)
	}
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(total))
		b.ReportAllocs()
		n := 0
		cpu := processCPU()
		for b.Loop() {
			n++
			renumber(bodies, marks, n)
			for _, body := range bodies {
				if _, err := decodeParams(body); err != nil {
					b.Fatal(err)
				}
			}
		}
		if cpu := processCPU() - cpu; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		}
	})
	b.Run("server", func(b *testing.B) { benchServerDecode(b, bodies, marks, 0) })
	b.Run("server-nomsgcache", func(b *testing.B) { benchServerDecode(b, bodies, marks, -1) })
}

// benchServerDecode is BenchmarkDecodeHistory's server case with a message
// cache of limit bytes (0 the default, -1 none: the decoder before the
// message cache).
func benchServerDecode(b *testing.B, bodies [][]byte, marks [][]int, limit int) {
	total := 0
	for _, body := range bodies {
		total += len(body)
	}
	var d decoder
	d.msgs.limit = limit
	b.SetBytes(int64(total))
	b.ReportAllocs()
	n := 0
	cpu := processCPU()
	for b.Loop() {
		n++
		renumber(bodies, marks, n)
		for _, body := range bodies {
			if _, err := d.decode(body); err != nil {
				b.Fatal(err)
			}
		}
	}
	if cpu := processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	}
	hits, misses, _, _ := d.msgs.stats()
	if hits+misses > 0 {
		b.ReportMetric(float64(hits)/float64(hits+misses), "hit-ratio")
	}
}

// BenchmarkDecodeInterleaved measures the message cache's hit ratio when
// many sessions run at once, each op a round of 500 sessions taking turns
// request by request (a message comes back after a request of every other
// session), with caches larger and smaller than the sessions' histories
// (about 8 MB of messages at the last request), and evictions comparing
// 1 (random), 2, msgSample, 16 and all (LRU) entries. The most a cache can
// hit is 25 messages of 36 (0.694; see TestMessageCacheHits).
func BenchmarkDecodeInterleaved(b *testing.B) {
	const sessions = 500
	bodies := sessionBodies(b)
	marks := markOffsets(bodies)
	for _, limit := range []int{64 << 20, 16 << 20, 8 << 20, 4 << 20, 2 << 20} {
		for _, sample := range []int{1, 2, msgSample, 16, 1 << 20} {
			b.Run(fmt.Sprintf("cache=%dMiB/sample=%d", limit>>20, sample), func(b *testing.B) {
				var d decoder
				d.msgs.limit = limit
				d.msgs.sample = sample
				round := 0
				for b.Loop() {
					round++
					for r, body := range bodies {
						for s := range sessions {
							num := fmt.Appendf(nil, "S#%06d", (round*sessions+s)%1000000)
							for _, at := range marks[r] {
								copy(body[at:], num)
							}
							if _, err := d.decode(body); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				hits, misses, _, size := d.msgs.stats()
				b.ReportMetric(float64(hits)/float64(hits+misses), "hit-ratio")
				b.ReportMetric(float64(size)/(1<<20), "cached-MiB")
			})
		}
	}
}
