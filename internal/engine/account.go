package engine

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// totals are the session's running cost and per-model usage. They span every
// run of the session and include subagents, which report into them through
// AddUsage.
type totals struct {
	mu   sync.Mutex
	cost float64
	// models is the usage per model, in the order of their first reply:
	// a session uses one model or a few, so a slice searched in order
	// (usageOf), not a map, whose first group alone takes 200 bytes.
	models []modelTotal
	// last is the usage of the session's latest reply (not a
	// subagent's), on lastModel; see LastUsage.
	last      *model.Usage
	lastModel string
}

// modelTotal is one model's usage in totals.models.
type modelTotal struct {
	id    string
	usage *message.ModelUsage
}

// usageOf returns the usage of modelID, or nil; t.mu is held.
func (t *totals) usageOf(modelID string) *message.ModelUsage {
	for i := range t.models {
		if t.models[i].id == modelID {
			return t.models[i].usage
		}
	}
	return nil
}

// account adds one successful reply to the session totals.
func (r *run) account(resp *model.Response) {
	r.s.AddUsage(resp.Model, resp.Usage)
	u := resp.Usage
	r.s.totals.mu.Lock()
	r.s.totals.last, r.s.totals.lastModel = &u, resp.Model
	r.s.totals.mu.Unlock()
}

// AddUsage adds one reply's usage on a model to the session's cost and
// per-model usage, and to its parent's, for a subagent. It is safe for
// concurrent use.
func (s *Session) AddUsage(modelID string, u model.Usage) float64 {
	if s.cfg.Parent != nil {
		s.cfg.Parent.AddUsage(modelID, u)
	}
	price, canonical, basis := s.cfg.Prices.Quote(modelID)
	cost := price.Cost(u) // 0 for a model without a price
	if s.cfg.Parent == nil && s.cfg.Budget != nil {
		s.cfg.Budget.Charge(cost)
	}
	if s.addTotals(modelID, u, cost, price, canonical, basis) && s.cfg.UnknownPrice != nil && s.cfg.Parent == nil {
		// Once per model and session: the entry exists from now on. A
		// subagent's usage reaches the parent, which tells.
		s.cfg.UnknownPrice(modelID)
	}
	return cost
}

// addTotals adds one reply's usage and cost to the totals. It reports
// whether this is the first reply of a model without a price.
func (s *Session) addTotals(modelID string, u model.Usage, cost float64, price pricing.Price, canonical, basis string) (firstUnknown bool) {
	s.totals.mu.Lock()
	defer s.totals.mu.Unlock()
	s.totals.cost += cost
	mu := s.totals.usageOf(modelID)
	if mu == nil {
		provider := s.cfg.APIProvider
		if provider == "" {
			provider = "firstParty"
		}
		mu = &message.ModelUsage{ContextWindow: price.ContextWindow, MaxOutputTokens: price.MaxOutput,
			CanonicalModel: canonical, Provider: provider, CostBasis: basis,
			CostUnknown: basis == pricing.BasisUnknown}
		s.totals.models = append(s.totals.models, modelTotal{modelID, mu})
		firstUnknown = mu.CostUnknown
	}
	mu.InputTokens += u.InputTokens
	mu.OutputTokens += u.OutputTokens
	mu.CacheReadInputTokens += u.CacheReadInputTokens
	mu.CacheCreationInputTokens += u.CacheCreationInputTokens
	mu.WebSearchRequests += u.WebSearches()
	mu.CostUSD += cost
	oneHour := u.OneHourCacheTokens()
	mu.CacheCreationEphemeral1hInputToken += oneHour
	mu.CacheCreationEphemeral5mInputToken += u.CacheCreationInputTokens - oneHour
	return firstUnknown
}

// CostUSD returns the session's total cost so far.
func (s *Session) CostUSD() float64 {
	s.totals.mu.Lock()
	defer s.totals.mu.Unlock()
	return s.totals.cost
}

// Budget is a spending cap that a session shares with its subagents at
// every depth (see internal/lineage). When Config.Budget is set it replaces
// MaxBudgetUSD: the top-level session (the one without a Parent) starts it
// with each run and charges it with every cost it accounts, its subagents'
// and helper calls' included, and every session of the tree checks it
// after each reply and before each request.
type Budget interface {
	// StartRun marks the start of a top-level run; the cap counts from here.
	StartRun()
	// Charge adds one cost. It must be safe for concurrent use.
	Charge(usd float64)
	// Exhausted reports the cap and whether the spend reached it.
	Exhausted() (capUSD float64, over bool)
}

// budgetCap is the cap of this run's budget (0: none).
func (r *run) budgetCap() float64 {
	if b := r.s.cfg.Budget; b != nil {
		c, _ := b.Exhausted()
		return c
	}
	return r.s.cfg.MaxBudgetUSD
}

// overBudget reports whether this run has spent its budget: spent ≥ cap, and
// a NaN spend counts as spent. With a shared Budget, the spend is the whole
// tree's.
func (r *run) overBudget() bool {
	if b := r.s.cfg.Budget; b != nil {
		_, over := b.Exhausted()
		return over
	}
	max := r.s.cfg.MaxBudgetUSD
	if max <= 0 {
		return false
	}
	spent := r.s.CostUSD() - r.spentAtStart
	return math.IsNaN(spent) || !(spent < max)
}

// formatUSD prints a budget the way a person wrote it: 0.01, not 0.010000.
func formatUSD(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// RestoreTotals sets the session's running cost and per-model usage, as
// saved by an earlier process of a resumed session. The budget of later
// runs counts only what they spend.
func (s *Session) RestoreTotals(cost float64, mu map[string]message.ModelUsage) {
	s.totals.mu.Lock()
	defer s.totals.mu.Unlock()
	s.totals.cost = cost
	for _, k := range slices.Sorted(maps.Keys(mu)) {
		v := mu[k]
		if u := s.totals.usageOf(k); u != nil {
			*u = v
		} else {
			s.totals.models = append(s.totals.models, modelTotal{k, &v})
		}
	}
}

// Totals returns the session's total cost and per-model usage so far.
func (s *Session) Totals() (float64, map[string]message.ModelUsage) { return s.snapshot() }

// Effort returns the session's current effort ("" for the API's default).
func (s *Session) Effort() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Effort
}
