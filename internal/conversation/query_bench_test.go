package conversation_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// The benchmarks below measure the loop's own overhead against a
// zero-latency scripted server on loopback. BenchmarkProviderBaseline is the
// baseline: one streamed request through the same provider and server
// without the loop, so overhead = loop − requests × baseline.

func BenchmarkProviderBaseline(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetExhausted(agentlooptest.Text("Hello from the fake API."))
	p := provider(&testing.T{}, srv, nil)
	req := &model.Request{Model: "claude-opus-5-5", MaxTokens: 1024, Stream: true,
		Messages: []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("hi")}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Stream(context.Background(), req, model.NopHandler{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQueryTextOnly(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetExhausted(agentlooptest.Text("Hello from the fake API."))
	opts := &agentloop.Options{Provider: provider(&testing.T{}, srv, nil), Cwd: b.TempDir(), Tools: []string{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agentloop.Query(context.Background(), "hi", opts).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueryToolTurns runs queries of 10 tool turns (11 requests) with a
// read-only custom tool; divide by 10 for the cost of one turn.
func BenchmarkQueryToolTurns(b *testing.B) {
	const turns = 10
	var touched atomic.Int32
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := &agentloop.Options{Provider: provider(&testing.T{}, srv, nil), Cwd: b.TempDir(), Tools: []string{},
		CustomTools: testTools(&touched)}
	b.ReportAllocs()
	for b.Loop() {
		for i := range turns {
			srv.Push(agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", i), "echo", map[string]any{"text": "ping"}))
		}
		srv.Push(agentlooptest.Text("done"))
		res, err := agentloop.Query(context.Background(), "go", opts).Result()
		if err != nil || res.NumTurns != turns+1 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
