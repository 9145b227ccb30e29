package session

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// FuzzUsageJSON holds usageJSON to json.Marshal, with and without the
// nested objects, with any strings.
func FuzzUsageJSON(f *testing.F) {
	f.Add(int64(3), int64(5), int64(0), int64(7), int64(1), int64(2), uint8(3), "standard", "")
	f.Add(int64(-1), int64(0), int64(1<<62), int64(0), int64(0), int64(0), uint8(0), "", "us")
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), uint8(1), "a<b&c", "é\"\\\n")
	f.Fuzz(func(t *testing.T, in, out, cw, cr, a, b int64, nested uint8, tier, geo string) {
		u := model.Usage{InputTokens: in, OutputTokens: out, CacheCreationInputTokens: cw, CacheReadInputTokens: cr,
			ServiceTier: tier, InferenceGeo: geo}
		if nested&1 != 0 {
			u.CacheCreation = &model.CacheCreation{Ephemeral1hInputTokens: a, Ephemeral5mInputTokens: b}
		}
		if nested&2 != 0 {
			u.ServerToolUse = &model.ServerToolUse{WebSearchRequests: b, WebFetchRequests: a}
		}
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := usageJSON(&u); string(got) != string(want) {
			t.Fatalf("usageJSON(%+v) = %s; json.Marshal %s", u, got, want)
		}
	})
}
