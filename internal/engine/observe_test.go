package engine

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestNilObserverAllocatesNothing: without an Observer, every observation
// helper the loop calls is free of allocations.
func TestNilObserverAllocatesNothing(t *testing.T) {
	r := &run{s: &Session{}, ctx: context.Background()}
	ctx := context.Background()
	block := model.Content{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: []byte(`{}`)}
	resp := &model.Response{Model: "m", StopReason: "end_turn"}
	prompt := []model.Content{model.TextBlock("hello"), model.TextBlock("world")}
	var e ending
	allocs := testing.AllocsPerRun(100, func() {
		r.observeStart(prompt)
		r.turnBegin()
		r.modelBegin("m")
		r.modelRetry(model.RetryInfo{Attempt: 1, Status: 529, Kind: "overloaded"})
		r.modelEnd("m", resp, nil)
		r.toolBegin(ctx, &block)
		_ = r.toolCtx(ctx, "toolu_1")
		_ = r.toolRunCtx(ctx, "toolu_1")
		r.toolEnd(&outcome{block: model.Content{ToolUseID: "toolu_1"}})
		end := r.observeCompaction("auto")
		r.compacted(10, 5, resp)
		end()
		r.turnEnd()
		r.observeEnd(&e)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run without an Observer, want 0", allocs)
	}
}
