package conversation

import "testing"

func TestParseTokens(t *testing.T) {
	for in, want := range map[string]int64{"200000": 200_000, "200k": 200_000, "200K": 200_000, "1m": 1_000_000,
		"1.5m": 1_500_000, "200_000": 200_000, "200,000": 200_000} {
		if got, err := parseTokens(in); err != nil || got != want {
			t.Errorf("parseTokens(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"k", "lots", "-5", "0", "1e20"} {
		if got, err := parseTokens(in); err == nil {
			t.Errorf("parseTokens(%q) = %d, want an error", in, got)
		}
	}
}
