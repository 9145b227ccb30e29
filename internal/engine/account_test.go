package engine

import (
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/google/go-cmp/cmp"
)

// TestTotalsPerModel checks the per-model totals kept in a slice: replies
// of several models add up apart, a restored session's usage is merged by
// model, and the snapshot has one entry per model.
func TestTotalsPerModel(t *testing.T) {
	s := &Session{}
	s.RestoreTotals(0.5, map[string]message.ModelUsage{
		"m-b": {InputTokens: 100, CostUSD: 0.25},
		"m-c": {InputTokens: 7},
	})
	price := pricing.Price{ContextWindow: 1000}
	s.addTotals("m-a", model.Usage{InputTokens: 1, OutputTokens: 2}, 0.1, price, "m-a", pricing.BasisUnknown)
	s.addTotals("m-b", model.Usage{InputTokens: 10}, 0.2, price, "m-b", "")
	s.addTotals("m-a", model.Usage{InputTokens: 3}, 0.1, price, "m-a", pricing.BasisUnknown)
	cost, mu := s.snapshot()
	if cost < 0.89 || cost > 0.91 {
		t.Errorf("cost = %v, want 0.9", cost)
	}
	got := map[string][2]int{}
	for id, u := range mu {
		got[id] = [2]int{int(u.InputTokens), int(u.OutputTokens)}
	}
	want := map[string][2]int{"m-a": {4, 2}, "m-b": {110, 0}, "m-c": {7, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-model tokens (-want +got):\n%s", diff)
	}
	if !mu["m-a"].CostUnknown || mu["m-a"].ContextWindow != 1000 {
		t.Errorf("m-a's entry = %+v; want it made by its first reply", mu["m-a"])
	}
}
