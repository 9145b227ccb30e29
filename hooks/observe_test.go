package hooks

import (
	"context"
	"testing"
)

// TestNoSpansAllocatesNothing: without Config.Spans, a dispatch's span
// helpers are free of allocations.
func TestNoSpansAllocatesNothing(t *testing.T) {
	d := &Dispatcher{}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_, sp := d.observe(ctx, PreToolUse, "PreToolUse:Bash", 2)
		sp.add(Notice{Outcome: Failed})
		sp.end()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per dispatch without Spans, want 0", allocs)
	}
}
