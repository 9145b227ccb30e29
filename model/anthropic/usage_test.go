package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// Without a null to leave out, decoding a usage delta straight onto the
// usage so far gives what the round trip through a map gives, nested
// objects merged field by field; and the usage it started from is not
// changed.
func TestOverrideUsageDirect(t *testing.T) {
	start := model.Usage{InputTokens: 300, OutputTokens: 1, CacheReadInputTokens: 290,
		CacheCreation: &model.CacheCreation{Ephemeral5mInputTokens: 7, Ephemeral1hInputTokens: 3},
		ServerToolUse: &model.ServerToolUse{WebSearchRequests: 1}}
	for _, raw := range []string{
		`{}`,
		`{"output_tokens":87}`,
		`{"input_tokens":310,"output_tokens":3,"server_tool_use":{"web_fetch_requests":4}}`,
		`{"cache_creation":{"ephemeral_1h_input_tokens":9},"service_tier":"standard"}`,
		`{"unknown_field":{"a":[1,2]},"output_tokens":5}`,
		`{"output_tokens":"x"}`,
	} {
		before := cloneUsage(start)
		got, gerr := overrideUsage(start, json.RawMessage(raw))
		want, werr := overrideUsageMap(start, json.RawMessage(raw))
		if (gerr != nil) != (werr != nil) {
			t.Errorf("%s: error %v, through a map %v", raw, gerr, werr)
			continue
		}
		if d := cmp.Diff(want, got); gerr == nil && d != "" {
			t.Errorf("%s (-map +direct):\n%s", raw, d)
		}
		if d := cmp.Diff(before, start); d != "" {
			t.Errorf("%s changed the usage it started from:\n%s", raw, d)
		}
	}
}
