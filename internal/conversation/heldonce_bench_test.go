//go:build unix

package conversation_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model"
)

// heldTurns is how many tool turns BenchmarkHistoryHeld's session makes.
const heldTurns = 200

// BenchmarkHistoryHeld (issue 34) runs one Client session of heldTurns
// tool calls, each returning 4 KB of numbered lines as Read does, through
// the Anthropic provider (the in-process transport of
// BenchmarkLongSession), and reports the heap the idle Client still holds
// afterwards, per KB of its last request (held-B/KB): what keeping the
// history costs. "sealed" is the provider as it is, which takes sealed
// results, so the loop keeps each result once, as JSON; "unsealed", the
// baseline in the same run, is the same provider behind a wrapper that
// hides model.SealedSender, so the loop keeps the text and the provider's
// memo the JSON.
func BenchmarkHistoryHeld(b *testing.B) {
	for _, mode := range []string{"sealed", "unsealed"} {
		b.Run(mode, func(b *testing.B) {
			var held, lastKB float64
			for b.Loop() {
				held, lastKB = historyHeld(b, mode == "sealed")
			}
			b.ReportMetric(held/lastKB, "held-B/KB")
			b.ReportMetric(lastKB, "last-KB")
		})
	}
}

// historyHeld runs the session and returns the heap it holds once idle
// (live heap with the Client open, less the live heap after it closed)
// and its last request's size in KB.
func historyHeld(b *testing.B, sealed bool) (held, lastKB float64) {
	tr, p := cannedProvider(b, heldTurns)
	var prov model.Provider = p
	if !sealed {
		prov = plainProvider{p}
	}
	var lines strings.Builder
	for i := 1; lines.Len() < 4<<10; i++ {
		fmt.Fprintf(&lines, "%d\tfunc f%d(x int) int { return x * %d } // \"line\" %d\n", i, i, i, i)
	}
	text := lines.String()
	echo := agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		// A string of its own for each call, as a Read's output is.
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock(in.Text + "\n" + text)}}, nil
	}, &agentloop.ToolOptions{ReadOnly: true})
	c, err := agentloop.NewClient(&agentloop.Options{Provider: prov, Cwd: b.TempDir(), Tools: []string{},
		CustomTools: []agentloop.Tool{echo}, NoSessionPersistence: true, MaxTurns: 2 * heldTurns})
	if err != nil {
		b.Fatal(err)
	}
	res, err := c.Query(context.Background(), "Echo things.").Result()
	if err != nil || res.NumTurns != heldTurns+1 {
		b.Fatalf("err %v, turns %d", err, res.NumTurns)
	}
	open := liveHeap()
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	c = nil
	closed := liveHeap()
	return float64(open - closed), float64(tr.size[len(tr.size)-1]) / 1024
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// plainProvider is a provider without model.SealedSender.
type plainProvider struct{ p model.Provider }

func (w plainProvider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	return w.p.Stream(ctx, req, h)
}
