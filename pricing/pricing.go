// Package pricing turns token usage into US dollars, the way the reference
// computes total_cost_usd, and resolves model aliases.
//
// Prices are list prices in USD per million tokens. A model may have a long
// prompt tier: when the prompt of one request (input + cache write + cache
// read tokens) exceeds the tier's threshold, all of that request's rates
// switch. Unknown models are priced at the default model's rates, and
// [Cost] says so. The numbers are estimates, not billing.
package pricing

import (
	"strings"

	"github.com/agentloop/agentloop/model"
)

// DefaultModel is the model used when none is configured.
const DefaultModel = "claude-opus-5-5"

// Rates are USD per million tokens, and per request for web searches.
type Rates struct {
	Input        float64
	Output       float64
	CacheWrite5m float64
	CacheWrite1h float64
	CacheRead    float64
	WebSearch    float64 // per request
}

// Price is a model's price list, limits and request capabilities.
type Price struct {
	Rates
	// LongPrompt, when set, replaces Rates for requests whose prompt is
	// larger than LongPromptAbove tokens.
	LongPrompt      *Rates
	LongPromptAbove int64
	// ContextWindow and MaxOutput are the model's limits, in tokens.
	ContextWindow int64
	MaxOutput     int64
	// Caps says which request features the model accepts.
	Caps Caps
}

// Caps are the request features a model accepts. Requests for a model
// without a feature are sent without it.
type Caps struct {
	Effort           bool // output_config.effort
	Thinking         bool // thinking enabled with a budget, or disabled
	AdaptiveThinking bool // thinking type adaptive
}

var (
	capsAll     = Caps{Effort: true, Thinking: true, AdaptiveThinking: true}
	capsNoAdapt = Caps{Effort: true, Thinking: true}
	capsBudget  = Caps{Thinking: true}
)

const webSearch = 0.01

var table = map[string]Price{
	"claude-opus-5-5":   {Rates: Rates{4, 20, 5, 8, 0.2, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll},
	"claude-sonnet-5-5": {Rates: Rates{2, 10, 2.5, 4, 0.1, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll},
	"claude-fable-5-2":  {Rates: Rates{8, 40, 10, 16, 0.2, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll},
	"claude-haiku-5-5": {
		Rates:      Rates{0.1, 0.5, 0.125, 0.2, 0.01, webSearch},
		LongPrompt: &Rates{0.5, 2.5, 0.625, 1, 0.05, webSearch}, LongPromptAbove: 100_000,
		ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll,
	},
	// Earlier generations, by their list prices.
	"claude-opus-4-5":   {Rates: Rates{5, 25, 6.25, 10, 0.5, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsNoAdapt},
	"claude-sonnet-4-5": {Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget},
	"claude-haiku-4-5":  {Rates: Rates{1, 5, 1.25, 2, 0.1, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget},
	"claude-3-5-haiku":  {Rates: Rates{0.8, 4, 1, 1.6, 0.08, webSearch}, ContextWindow: 200_000, MaxOutput: 8_192},
}

var aliases = map[string]string{
	"opus":   "claude-opus-5-5",
	"sonnet": "claude-sonnet-5-5",
	"haiku":  "claude-haiku-5-5",
	"fable":  "claude-fable-5-2",
}

// Resolve maps an alias (opus, sonnet, haiku, fable) to a model id; other
// names are returned unchanged. An empty name resolves to DefaultModel.
func Resolve(name string) string {
	if name == "" {
		return DefaultModel
	}
	if id, ok := aliases[strings.ToLower(name)]; ok {
		return id
	}
	return name
}

// Aliases returns the alias names Resolve knows.
func Aliases() []string { return []string{"opus", "sonnet", "haiku", "fable"} }

// Lookup returns the price of a model id or alias. ok is false for unknown
// models, which get the default model's price.
func Lookup(name string) (p Price, canonical string, ok bool) {
	id := Resolve(name)
	if p, ok := table[id]; ok {
		return p, id, true
	}
	// Dated or suffixed ids (claude-sonnet-4-5-20250929) price as their base.
	for base, p := range table {
		if strings.HasPrefix(id, base+"-") || strings.HasPrefix(id, base+"[") {
			return p, base, true
		}
	}
	return table[DefaultModel], DefaultModel, false
}

// Cost returns the cost in USD of one response's usage on a model.
func Cost(name string, u model.Usage) float64 {
	p, _, _ := Lookup(name)
	return p.Cost(u)
}

// Cost returns the cost in USD of one response's usage at this price.
func (p Price) Cost(u model.Usage) float64 {
	r := p.Rates
	if p.LongPrompt != nil && u.PromptTokens() > p.LongPromptAbove {
		r = *p.LongPrompt
	}
	oneHour := u.OneHourCacheTokens()
	fiveMin := u.CacheCreationInputTokens - oneHour
	cost := float64(u.InputTokens)/1e6*r.Input +
		float64(u.OutputTokens)/1e6*r.Output +
		float64(u.CacheReadInputTokens)/1e6*r.CacheRead +
		float64(oneHour)/1e6*r.CacheWrite1h +
		float64(fiveMin)/1e6*r.CacheWrite5m
	if u.InferenceGeo == "us" {
		cost *= 1.1
	}
	return cost + float64(u.WebSearches())*r.WebSearch
}
