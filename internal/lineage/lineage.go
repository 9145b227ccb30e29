// Package lineage holds what a session shares with every subagent below it,
// at every depth: one spending cap and what the whole tree has spent, the
// rule that gives each subagent a turn limit, the tools nobody in the tree
// may use, the hook dispatcher, and the authoriser (which holds the
// permission mode and rules). A subagent is handed its parent's Lineage,
// never a copy, so whatever it does is checked against the same limits as
// the main loop: before every model request (the budget, through the
// engine's Budget), and before every tool call (the authoriser).
//
// Cancellation and deadlines are not stored here: a subagent runs under the
// context of the tool call that started it, so cancelling the parent's run,
// or reaching its deadline, ends every subagent below it.
package lineage

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
)

// DefaultSubagentMaxTurns is the turn limit of a subagent when neither its
// definition nor any loop above it sets one. The reference sets none; an
// unbounded subagent can spend a session's money unseen, so agentloop
// bounds it.
const DefaultSubagentMaxTurns = 100

// Agent identifies one loop of a session's tree. The zero Agent is the
// main loop.
type Agent struct {
	// ID is the subagent's id ("" for the main loop) and Type its
	// subagent_type.
	ID, Type string
	// Depth is 0 for the main loop, 1 for its subagents, and so on.
	Depth int
	// MaxTurns is the loop's turn limit; 0 means none (only the main loop
	// can have none).
	MaxTurns int
}

// Main reports whether a is the main loop.
func (a Agent) Main() bool { return a.ID == "" }

// Authorizer decides one tool call made by the loop a.
type Authorizer func(ctx context.Context, a Agent, call *engine.ToolCall) engine.Decision

// Config is what a Lineage shares. Every field may be zero.
type Config struct {
	// MaxBudgetUSD caps what the tree spends in one run of the main loop;
	// 0 means no cap.
	MaxBudgetUSD float64
	// DisallowedTools are tool names that no loop of the tree may use,
	// whatever a subagent's definition lists. Entries with a rule
	// specifier ("Bash(rm:*)") are rules for the authoriser and are
	// ignored here.
	DisallowedTools []string
	// Hooks is the dispatcher every loop's hooks go through.
	Hooks *hooks.Dispatcher
	// Authorize decides every tool call of every loop; it holds the
	// permission mode and rules. Nil allows all.
	Authorize Authorizer
}

// Lineage is shared by a session and all its subagents. It is safe for
// concurrent use.
type Lineage struct {
	cfg Config
	// spent is everything charged since New; base is spent when the main
	// loop's current run started. Both hold float64 bits.
	spent, base atomic.Uint64
}

// New returns a Lineage that has spent nothing.
func New(cfg Config) *Lineage {
	var bare []string
	for _, n := range cfg.DisallowedTools {
		if !strings.Contains(n, "(") {
			bare = append(bare, canonical(strings.TrimSpace(n)))
		}
	}
	cfg.DisallowedTools = bare
	return &Lineage{cfg: cfg}
}

// StartRun marks the start of a run of the main loop: the budget counts what
// is spent from here on, as the reference counts from each query's start.
// It implements engine.Budget.
func (l *Lineage) StartRun() { l.base.Store(l.spent.Load()) }

// Charge adds usd, the cost of one model reply or helper call anywhere in
// the tree. A NaN cost makes the budget count as spent. It implements
// engine.Budget.
func (l *Lineage) Charge(usd float64) {
	for {
		old := l.spent.Load()
		if l.spent.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+usd)) {
			return
		}
	}
}

// Spent is what the tree has spent since the main loop's run started.
func (l *Lineage) Spent() float64 {
	return math.Float64frombits(l.spent.Load()) - math.Float64frombits(l.base.Load())
}

// Exhausted reports the cap and whether the tree's spend has reached it
// (spent ≥ cap; a NaN spend counts as reached). Without a cap it reports
// false. It implements engine.Budget.
func (l *Lineage) Exhausted() (capUSD float64, over bool) {
	capUSD = l.cfg.MaxBudgetUSD
	if !(capUSD > 0) {
		return capUSD, false
	}
	spent := l.Spent()
	return capUSD, math.IsNaN(spent) || !(spent < capUSD)
}

// SpawnRefusal is the Agent tool's error when the budget is spent and no
// new subagent may start, in the reference's terms; "" when one may.
func (l *Lineage) SpawnRefusal() string {
	capUSD, over := l.Exhausted()
	if !over {
		return ""
	}
	return fmt.Sprintf("Budget limit reached ($%s spent of the $%s maximum). No new subagent can start in this session: "+
		"finish the task with what you already have.", usd(l.Spent()), usd(capUSD))
}

// usd prints an amount of dollars to a hundredth of a cent at most.
func usd(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// Child returns the identity of a new subagent of parent. Its turn limit is
// the smaller of its definition's (defMaxTurns) and its parent's, of those
// that are set, else DefaultSubagentMaxTurns: a subagent never has more
// turns than the loop that started it.
func (l *Lineage) Child(parent Agent, id, typ string, defMaxTurns int) Agent {
	limit := 0
	for _, n := range []int{defMaxTurns, parent.MaxTurns} {
		if n > 0 && (limit == 0 || n < limit) {
			limit = n
		}
	}
	if limit == 0 {
		limit = DefaultSubagentMaxTurns
	}
	return Agent{ID: id, Type: typ, Depth: parent.Depth + 1, MaxTurns: limit}
}

// Disallowed reports whether no loop of the tree may use the tool name.
func (l *Lineage) Disallowed(name string) bool {
	return slices.Contains(l.cfg.DisallowedTools, canonical(name))
}

// SubagentTools picks the tool names of a subagent: those its definition
// asks for (requested; nil means all of the parent's), in that order,
// keeping only tools the parent has (parent), that the definition does not
// remove (removed), that the tree does not disallow, and that a subagent may
// use at all (AskUserQuestion has nobody to ask in a subagent). "Task" is
// the Agent tool's old name.
func (l *Lineage) SubagentTools(parent, requested, removed []string) []string {
	if requested == nil {
		requested = parent
	}
	removed = slices.Clone(removed)
	for i, n := range removed {
		removed[i] = canonical(n)
	}
	var out []string
	for _, n := range requested {
		n = canonical(n)
		switch {
		case n == "AskUserQuestion", slices.Contains(out, n), l.Disallowed(n),
			!slices.Contains(parent, n), slices.Contains(removed, n):
			continue
		}
		out = append(out, n)
	}
	return out
}

func canonical(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}

// Hooks is the dispatcher of the whole tree.
func (l *Lineage) Hooks() *hooks.Dispatcher { return l.cfg.Hooks }

// AuthorizerFor is the engine's authoriser for the loop a: every call goes
// to the tree's Authorizer with a's identity.
func (l *Lineage) AuthorizerFor(a Agent) engine.Authorizer {
	return func(ctx context.Context, call *engine.ToolCall) engine.Decision {
		if l.cfg.Authorize == nil {
			return engine.Decision{Allow: true, Source: "config", ReasonType: "mode"}
		}
		return l.cfg.Authorize(ctx, a, call)
	}
}
