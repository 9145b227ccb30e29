package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// benchHistory is a conversation near a 1M-token window: turns tool
// rounds, each with an output of size bytes.
func benchHistory(turns, size int) []model.Message {
	out := strings.Repeat("0123456789abcdef", size/16)
	h := []model.Message{user("start the work")}
	for i := range turns {
		id := fmt.Sprintf("toolu_%04d", i)
		h = append(h, call(id), result(id, out))
	}
	return h
}

// BenchmarkCompaction measures what compaction costs besides the model
// call: cutting a history of about 960k tokens (300 tool rounds of 12.8 KB),
// fitting it to the window, building the summary request and the
// compacted history ("compact"); and the check made before every request,
// estimating what one tool round added ("per-turn").
func BenchmarkCompaction(b *testing.B) {
	h := benchHistory(300, 12_800)
	const threshold = 967_000
	b.Run("compact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			older, kept := SplitLast(h, threshold/2)
			req := Request{Model: "m", History: Fit(older, threshold), MaxTokens: 20_000, Instructions: "Keep names."}.Build()
			_ = Compacted([]model.Content{model.TextBlock(SummaryText("s", true))}, kept)
			if len(req.Messages) == 0 {
				b.Fatal("empty request")
			}
		}
	})
	b.Run("per-turn", func(b *testing.B) {
		b.ReportAllocs()
		added := h[len(h)-2:]
		for b.Loop() {
			Due(900_000, added, threshold)
		}
	})
}
