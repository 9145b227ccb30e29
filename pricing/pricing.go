// Package pricing turns token usage into US dollars, the way the reference
// computes total_cost_usd, and resolves model aliases.
//
// Prices are list prices in USD per million tokens. A model may have a long
// prompt tier: when the prompt of one request (input + cache write + cache
// read tokens) exceeds the tier's threshold, all of that request's rates
// switch. The numbers are estimates, not billing.
//
// Model ids as Amazon Bedrock and Google Vertex AI spell them are priced as
// their family: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" and
// "claude-sonnet-4-5@20250929" are claude-sonnet-4-5 (see [Canonical]).
//
// A model the table does not know costs nothing: [Cost] returns 0 for it
// and [Overrides.Quote] says its basis is [BasisUnknown], so that callers
// can flag the figure rather than bill a local or foreign model at a
// Claude price. (The reference CLI prices unknown models at the default
// model's rates instead.) Prices set by the host ([Overrides], the
// modelPricing setting) replace the table's.
package pricing

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/model"
)

// DefaultModel is the model used when none is configured.
const DefaultModel = "claude-opus-5-5"

// Rates are USD per million tokens, and per request for web searches.
// Their JSON is the modelPricing setting's: {"input": 3, "output": 15,
// "cacheWrite5m": 3.75, "cacheWrite1h": 6, "cacheRead": 0.3,
// "webSearch": 0.01}.
type Rates struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cacheWrite5m"`
	CacheWrite1h float64 `json:"cacheWrite1h"`
	CacheRead    float64 `json:"cacheRead"`
	WebSearch    float64 `json:"webSearch"` // per request
}

// ListRates returns the rates of a model that costs input and output USD
// per million tokens, with the cache and web search rates that go with
// them in Anthropic's list: a 5-minute cache write at 1.25 × input, a
// 1-hour one at 2 × input, a cache read at 0.1 × input, and $0.01 a web
// search.
func ListRates(input, output float64) Rates {
	return Rates{Input: input, Output: output, CacheWrite5m: 1.25 * input, CacheWrite1h: 2 * input,
		CacheRead: 0.1 * input, WebSearch: webSearch}
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

// listing is one model of the table: its id and list price.
type listing struct {
	id    string
	price Price
}

// table lists the models by id. It is an array, laid out by the
// compiler, rather than a map, which every process would build at
// start-up; listed finds a model in it.
var table = [...]listing{
	{"claude-opus-5-5", Price{Rates: Rates{4, 20, 5, 8, 0.2, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll}},
	{"claude-sonnet-5-5", Price{Rates: Rates{2, 10, 2.5, 4, 0.1, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll}},
	{"claude-fable-5-2", Price{Rates: Rates{8, 40, 10, 16, 0.2, webSearch}, ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll}},
	{"claude-haiku-5-5", Price{
		Rates:      Rates{0.1, 0.5, 0.125, 0.2, 0.01, webSearch},
		LongPrompt: &Rates{0.5, 2.5, 0.625, 1, 0.05, webSearch}, LongPromptAbove: 100_000,
		ContextWindow: 1_000_000, MaxOutput: 128_000, Caps: capsAll,
	}},
	// Earlier generations, by their list prices.
	{"claude-opus-4-5", Price{Rates: Rates{5, 25, 6.25, 10, 0.5, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsNoAdapt}},
	{"claude-sonnet-4-5", Price{Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget}},
	{"claude-haiku-4-5", Price{Rates: Rates{1, 5, 1.25, 2, 0.1, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget}},
	{"claude-3-5-haiku", Price{Rates: Rates{0.8, 4, 1, 1.6, 0.08, webSearch}, ContextWindow: 200_000, MaxOutput: 8_192}},
	// The reference's other tiers (sdk-surface.md J.2), so that their
	// ids are priced rather than flagged unknown.
	{"claude-opus-4-8", Price{Rates: Rates{5, 25, 6.25, 10, 0.5, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsNoAdapt}},
	{"claude-opus-4-7", Price{Rates: Rates{5, 25, 6.25, 10, 0.5, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsNoAdapt}},
	{"claude-opus-4-6", Price{Rates: Rates{5, 25, 6.25, 10, 0.5, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsNoAdapt}},
	{"claude-opus-4-1", Price{Rates: Rates{15, 75, 18.75, 30, 1.5, webSearch}, ContextWindow: 200_000, MaxOutput: 32_000, Caps: capsBudget}},
	{"claude-opus-4", Price{Rates: Rates{15, 75, 18.75, 30, 1.5, webSearch}, ContextWindow: 200_000, MaxOutput: 32_000, Caps: capsBudget}},
	{"claude-sonnet-4-6", Price{Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget}},
	{"claude-sonnet-4", Price{Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget}},
	{"claude-3-7-sonnet", Price{Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 64_000, Caps: capsBudget}},
	{"claude-3-5-sonnet", Price{Rates: Rates{3, 15, 3.75, 6, 0.3, webSearch}, ContextWindow: 200_000, MaxOutput: 8_192}},
}

// listed returns the table's price of the model id, ok false when the
// table does not list it.
func listed(id string) (p Price, ok bool) {
	for i := range table {
		if table[i].id == id {
			return table[i].price, true
		}
	}
	return Price{}, false
}

// alias returns the model id of an alias (lower case), ok false for a name
// that is none.
func alias(name string) (id string, ok bool) {
	switch name {
	case "opus":
		return "claude-opus-5-5", true
	case "sonnet":
		return "claude-sonnet-5-5", true
	case "haiku":
		return "claude-haiku-5-5", true
	case "fable":
		return "claude-fable-5-2", true
	}
	return "", false
}

// Resolve maps an alias (opus, sonnet, haiku, fable) to a model id; other
// names are returned unchanged. An empty name resolves to DefaultModel.
func Resolve(name string) string {
	if name == "" {
		return DefaultModel
	}
	if id, ok := alias(strings.ToLower(name)); ok {
		return id
	}
	return name
}

// Aliases returns the alias names Resolve knows.
func Aliases() []string { return []string{"opus", "sonnet", "haiku", "fable"} }

// Lookup returns the price of a model id or alias, Bedrock and Vertex ids
// included. ok is false for unknown models, which get the default model's
// price and canonical id: use its limits and capabilities if you must
// guess, but not its rates (see [Overrides.Quote]).
func Lookup(name string) (p Price, canonical string, ok bool) {
	if p, id, ok := lookup(Resolve(name)); ok {
		return p, id, true
	}
	p, _ = listed(DefaultModel)
	return p, DefaultModel, false
}

// lookup finds id, or the family of a dated, suffixed or platform id, in
// the table.
func lookup(id string) (Price, string, bool) {
	if p, ok := listed(id); ok {
		return p, id, true
	}
	id = Canonical(id)
	if p, ok := listed(id); ok {
		return p, id, true
	}
	// Dated or suffixed ids (claude-sonnet-4-5-20250929) price as their
	// base; the longest base wins, so claude-opus-4-5-… is not
	// claude-opus-4.
	best := -1
	for i := range table {
		base := table[i].id
		if (best < 0 || len(base) > len(table[best].id)) && (strings.HasPrefix(id, base+"-") || strings.HasPrefix(id, base+"[")) {
			best = i
		}
	}
	if best >= 0 {
		return table[best].price, table[best].id, true
	}
	// claude-opus-4-0 is claude-opus-4.
	if base, ok := strings.CutSuffix(id, "-0"); ok {
		if p, ok := listed(base); ok {
			return p, base, true
		}
	}
	return Price{}, "", false
}

// spelling holds the patterns of the cloud platforms' spelling of model
// ids.
type spelling struct{ prefix, bedrockVersion, vertexVersion *regexp.Regexp }

var platformSpellingOnce lazy.Value[spelling] // the value of platformSpelling, compiled at its first use

// platformSpelling returns the patterns of the cloud platforms' spelling,
// compiled when first needed rather than by every process at start-up.
func platformSpelling() spelling { return platformSpellingOnce.Get(compileSpelling) }

func compileSpelling() (p spelling) {
	// A Bedrock id's prefix: an optional cross-region inference profile
	// (us., eu., apac., global., …) and the anthropic. provider.
	p.prefix = regexp.MustCompile(`^(?:[a-z]{2,6}\.)?anthropic\.`)
	// A Bedrock id's version suffix: -v1:0, -v2.
	p.bedrockVersion = regexp.MustCompile(`-v\d+(?::\d+)?$`)
	// A Vertex id's version: @20250929, @latest.
	p.vertexVersion = regexp.MustCompile(`@[A-Za-z0-9._-]+$`)
	return p
}

// Canonical returns a model id without the spelling of the cloud
// platforms: the Bedrock prefix (anthropic., us.anthropic.) and version
// suffix (-v1:0), and the Vertex version (@20250929). Other ids are
// returned unchanged. The result may still carry a date
// (claude-sonnet-4-5-20250929); [Lookup] prices that as its family.
func Canonical(id string) string {
	p := platformSpelling()
	id = p.prefix.ReplaceAllString(id, "")
	id = p.bedrockVersion.ReplaceAllString(id, "")
	return p.vertexVersion.ReplaceAllString(id, "")
}

// Cost returns the cost in USD of one response's usage on a model at the
// table's list price: 0 for a model the table does not know.
func Cost(name string, u model.Usage) float64 {
	p, _, _ := Overrides(nil).Quote(name)
	return p.Cost(u)
}

// The bases of a quoted price, as the result's modelUsage costBasis
// reports them.
const (
	BasisList    = "list"    // the table's list price
	BasisManaged = "managed" // a price set by the host or the modelPricing setting
	BasisUnknown = "unknown" // a model without a price: it costs 0
)

// Overrides are prices that replace the table's, by model: the
// modelPricing setting and the host's own prices. A key is a model id as
// requests name it, an alias (sonnet) or a family (claude-sonnet-4-5,
// which covers its dated and platform ids). The nil Overrides is the
// table as it is.
type Overrides map[string]Rates

// Quote returns what a model costs: its price, its canonical id and the
// price's basis. An override of the model (by its exact id first, then
// its alias's or family's) gives its rates, with the table's limits and
// capabilities when the table knows the model, and basis [BasisManaged].
// Else a model the table knows has its list price ([BasisList]). Else the
// price is zero (no rates, no limits), the canonical id is the name as
// given, and the basis is [BasisUnknown].
func (o Overrides) Quote(name string) (p Price, canonical, basis string) {
	id := Resolve(name)
	p, canonical, known := lookup(id)
	if r, ok := o.find(name, id, canonical); ok {
		if !known {
			canonical = id
		}
		p.Rates, p.LongPrompt, p.LongPromptAbove = r, nil, 0
		return p, canonical, BasisManaged
	}
	if known {
		return p, canonical, BasisList
	}
	return Price{}, id, BasisUnknown
}

// find returns the override for a model asked for as name, resolved to
// id, of family canonical ("" when unknown).
func (o Overrides) find(name, id, canonical string) (Rates, bool) {
	if len(o) == 0 {
		return Rates{}, false
	}
	for _, k := range []string{name, id, Canonical(id), canonical} {
		if r, ok := o[k]; ok && k != "" {
			return r, true
		}
	}
	for k, r := range o {
		if k == "" {
			continue
		}
		if rk := Resolve(k); rk == id || (canonical != "" && rk == canonical) {
			return r, true
		}
	}
	return Rates{}, false
}

// ParseOverrides reads the modelPricing setting: an object from model id
// (or alias, or family) to rates in USD per million tokens, e.g.
// {"claude-sonnet-4-5": {"input": 3, "output": 15}}. Input and output are
// required; each cache and web search rate left out is derived from them
// as [ListRates] does. Negative or non-numeric rates are an error naming
// the model.
func ParseOverrides(raw json.RawMessage) (Overrides, error) {
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("modelPricing: want an object of model ids to rates: %w", err)
	}
	out := make(Overrides, len(m))
	for id, fields := range m {
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("modelPricing: an empty model id")
		}
		rate := func(k string) (float64, bool, error) {
			v, ok := fields[k]
			if !ok || string(v) == "null" {
				return 0, false, nil
			}
			var f float64
			if err := json.Unmarshal(v, &f); err != nil || f < 0 {
				return 0, false, fmt.Errorf("modelPricing %q: %s must be a number ≥ 0, not %s", id, k, v)
			}
			return f, true, nil
		}
		for k := range fields {
			switch k {
			case "input", "output", "cacheWrite5m", "cacheWrite1h", "cacheRead", "webSearch":
			default:
				return nil, fmt.Errorf("modelPricing %q: unknown rate %q (want input, output, cacheWrite5m, cacheWrite1h, cacheRead, webSearch)", id, k)
			}
		}
		in, okIn, err := rate("input")
		if err != nil {
			return nil, err
		}
		outR, okOut, err := rate("output")
		if err != nil {
			return nil, err
		}
		if !okIn || !okOut {
			return nil, fmt.Errorf("modelPricing %q: input and output rates are required", id)
		}
		r := ListRates(in, outR)
		for k, dst := range map[string]*float64{"cacheWrite5m": &r.CacheWrite5m, "cacheWrite1h": &r.CacheWrite1h,
			"cacheRead": &r.CacheRead, "webSearch": &r.WebSearch} {
			v, ok, err := rate(k)
			if err != nil {
				return nil, err
			}
			if ok {
				*dst = v
			}
		}
		out[id] = r
	}
	return out, nil
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
