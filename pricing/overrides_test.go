package pricing

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// Bedrock and Vertex ids price, and get the capabilities of, their family.
func TestPlatformIDs(t *testing.T) {
	tests := []struct{ id, family string }{
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"},
		{"eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
		{"anthropic.claude-opus-5-5-v1", "claude-opus-5-5"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		{"claude-opus-5-5@latest", "claude-opus-5-5"},
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
	}
	for _, tt := range tests {
		p, canon, ok := Lookup(tt.id)
		if !ok || canon != tt.family {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.id, canon, ok, tt.family)
			continue
		}
		if want := listedPrice(tt.family); p.Caps != want.Caps || p.Rates != want.Rates {
			t.Errorf("Lookup(%q): price %+v, want the family's %+v", tt.id, p, want)
		}
	}
	if got := Canonical("mistral.mistral-large-v1:0"); got != "mistral.mistral-large" {
		t.Errorf("Canonical of a foreign Bedrock id = %q", got)
	}
	if _, _, ok := Lookup("mistral.mistral-large-v1:0"); ok {
		t.Error("a foreign Bedrock model is known")
	}
}

func TestQuote(t *testing.T) {
	custom := Rates{Input: 1, Output: 2}
	o := Overrides{"claude-sonnet-4-5": custom, "opus": ListRates(10, 50), "my-local-model": ListRates(0.5, 1)}
	tests := []struct {
		name, model      string
		o                Overrides
		canonical, basis string
		rates            Rates
	}{
		{"list", "claude-haiku-4-5", o, "claude-haiku-4-5", BasisList, listedPrice("claude-haiku-4-5").Rates},
		{"family override covers platform ids", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", o, "claude-sonnet-4-5", BasisManaged, custom},
		{"alias key", "claude-opus-5-5", o, "claude-opus-5-5", BasisManaged, ListRates(10, 50)},
		{"unknown model priced by the host", "my-local-model", o, "my-local-model", BasisManaged, ListRates(0.5, 1)},
		{"unknown", "gpt-9", o, "gpt-9", BasisUnknown, Rates{}},
		{"unknown without overrides", "gpt-9", nil, "gpt-9", BasisUnknown, Rates{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, canon, basis := tt.o.Quote(tt.model)
			if canon != tt.canonical || basis != tt.basis {
				t.Errorf("Quote = %q, %q; want %q, %q", canon, basis, tt.canonical, tt.basis)
			}
			if diff := cmp.Diff(tt.rates, p.Rates); diff != "" {
				t.Errorf("rates (-want +got):\n%s", diff)
			}
		})
	}
	// An override drops the long-prompt tier and keeps the limits.
	p, _, _ := Overrides{"haiku": custom}.Quote("claude-haiku-5-5")
	if p.LongPrompt != nil || p.ContextWindow != listedPrice("claude-haiku-5-5").ContextWindow {
		t.Errorf("override of haiku: %+v", p)
	}
	if got := p.Cost(model.Usage{InputTokens: 1_000_000}); math.Abs(got-1) > 1e-9 {
		t.Errorf("cost at the override = %v, want 1", got)
	}
}

func TestParseOverrides(t *testing.T) {
	got, err := ParseOverrides(json.RawMessage(`{"claude-sonnet-4-5":{"input":2,"output":8},"x":{"input":1,"output":1,"cacheRead":0,"webSearch":0.02}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Overrides{
		"claude-sonnet-4-5": {Input: 2, Output: 8, CacheWrite5m: 2.5, CacheWrite1h: 4, CacheRead: 0.2, WebSearch: 0.01},
		"x":                 {Input: 1, Output: 1, CacheWrite5m: 1.25, CacheWrite1h: 2, CacheRead: 0, WebSearch: 0.02},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for in, wantErr := range map[string]string{
		`[]`:                                 "want an object",
		`{"m":{"input":1}}`:                  "input and output rates are required",
		`{"m":{"input":1,"output":-1}}`:      "output must be a number",
		`{"m":{"input":1,"output":1,"x":1}}`: `unknown rate "x"`,
		`{"m":{"input":"1","output":1}}`:     "input must be a number",
	} {
		if _, err := ParseOverrides(json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseOverrides(%s) = %v, want an error with %q", in, err, wantErr)
		}
	}
}

// Ids of a family are matched to the longest family name that starts
// them, whatever the map's order.
func TestLookupLongestFamily(t *testing.T) {
	for id, want := range map[string]string{
		"claude-opus-4-20250514":                  "claude-opus-4",
		"claude-opus-4-0":                         "claude-opus-4",
		"claude-opus-4-1-20250805":                "claude-opus-4-1",
		"claude-opus-4-5-20251101":                "claude-opus-4-5",
		"claude-sonnet-4-20250514":                "claude-sonnet-4",
		"claude-sonnet-4-5-20250929":              "claude-sonnet-4-5",
		"claude-3-7-sonnet-20250219":              "claude-3-7-sonnet",
		"anthropic.claude-opus-4-1-20250805-v1:0": "claude-opus-4-1",
	} {
		for range 20 { // map order varies from call to call
			if _, got, ok := Lookup(id); !ok || got != want {
				t.Fatalf("Lookup(%q) = %q, %v; want %q", id, got, ok, want)
			}
		}
	}
	p, _, _ := Lookup("claude-opus-4-1")
	if p.Input != 15 || p.Output != 75 {
		t.Errorf("claude-opus-4-1 rates %+v, want 15/75", p.Rates)
	}
}

// listedPrice is the table's price of id (the zero Price if it is not
// listed).
func listedPrice(id string) Price {
	p, _ := listed(id)
	return p
}
