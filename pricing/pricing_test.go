package pricing

import (
	"math"
	"testing"

	"github.com/agentloop/agentloop/model"
)

func TestCost(t *testing.T) {
	cc := func(h1, m5 int64) *model.CacheCreation {
		return &model.CacheCreation{Ephemeral1hInputTokens: h1, Ephemeral5mInputTokens: m5}
	}
	cases := []struct {
		name  string
		model string
		u     model.Usage
		want  float64
	}{
		// Values recorded from the reference's total_cost_usd.
		{"a_plain_text", "claude-opus-5-5", model.Usage{InputTokens: 100, OutputTokens: 20}, 0.0008},
		{"g_max_turns", "opus", model.Usage{InputTokens: 1000, OutputTokens: 40}, 0.0048},
		{"h_max_budget", "claude-opus-5-5", model.Usage{InputTokens: 500000, OutputTokens: 100}, 2.002},
		{"j_partial_messages", "claude-opus-5-5", model.Usage{InputTokens: 400, OutputTokens: 25}, 0.0021},
		{"sonnet input", "sonnet", model.Usage{InputTokens: 1_000_000}, 2},
		{"fable output", "fable", model.Usage{OutputTokens: 1_000_000}, 40},
		{"cache read", "claude-opus-5-5", model.Usage{CacheReadInputTokens: 1_000_000}, 0.2},
		{"cache write without breakdown is 5m", "claude-opus-5-5", model.Usage{CacheCreationInputTokens: 1_000_000}, 5},
		{"cache write 1h", "claude-opus-5-5", model.Usage{CacheCreationInputTokens: 1_000_000, CacheCreation: cc(1_000_000, 0)}, 8},
		{"cache write split", "claude-sonnet-5-5", model.Usage{CacheCreationInputTokens: 300_000, CacheCreation: cc(100_000, 200_000)}, 0.4 + 0.5},
		{"haiku at the tier boundary", "haiku", model.Usage{InputTokens: 100_000}, 0.01},
		{"haiku above the tier", "haiku", model.Usage{InputTokens: 100_001}, 100_001 * 0.5 / 1e6},
		{"haiku tier counts cache tokens", "haiku", model.Usage{InputTokens: 50_000, CacheReadInputTokens: 60_000, OutputTokens: 100_000},
			50_000*0.5/1e6 + 60_000*0.05/1e6 + 100_000*2.5/1e6},
		{"web search", "claude-opus-5-5", model.Usage{ServerToolUse: &model.ServerToolUse{WebSearchRequests: 3}}, 0.03},
		{"us inference", "claude-opus-5-5", model.Usage{InputTokens: 1_000_000, InferenceGeo: "us"}, 4.4},
		{"unknown model costs nothing", "mystery-model", model.Usage{InputTokens: 1_000_000}, 0},
		{"dated id", "claude-sonnet-4-5-20250929", model.Usage{InputTokens: 1_000_000}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cost(tc.model, tc.u); math.Abs(got-tc.want) > 1e-9*math.Max(1, tc.want) {
				t.Errorf("Cost = %.12f, want %.12f", got, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	for in, want := range map[string]string{
		"": DefaultModel, "opus": "claude-opus-5-5", "Sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5",
		"fable": "claude-fable-5-2", "claude-opus-4-5": "claude-opus-4-5",
	} {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	if _, canon, ok := Lookup("mystery"); ok || canon != DefaultModel {
		t.Errorf("Lookup(mystery) = %q, %v", canon, ok)
	}
}
