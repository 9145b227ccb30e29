package permission

import (
	"context"

	"github.com/agentloop/agentloop/internal/lazy"
)

// DecideIn judges call as Decide does, but as if the mode were mode: the
// rules, directories and everything else stay the checker's current
// ones. It serves subagents whose definition sets their own mode; the
// caller decides which mode a subagent may have (see Narrower).
func (c *Checker) DecideIn(ctx context.Context, mode Mode, call Call) Decision {
	st := c.state()
	if mode != "" && mode != st.mode {
		n := *st
		n.mode = mode
		st = &n
	}
	return st.decide(ctx, call)
}

var modeRankOnce lazy.Value[map[Mode]int] // the value of modeRank, built at its first use

// modeRank orders the modes by how much they allow without asking.
func modeRank() map[Mode]int { return modeRankOnce.Get(newModeRank) }

func newModeRank() map[Mode]int {
	return map[Mode]int{ModeDontAsk: 0, ModePlan: 1, ModeDefault: 2, ModeAcceptEdits: 3, ModeAuto: 3, ModeBypass: 4}
}

// Narrower reports whether a loop whose parent runs in parent may run in
// child: child may not allow more without asking than parent does. The
// reference also keeps a parent's bypassPermissions, acceptEdits or auto
// for its subagents whatever they ask for, so under those parents only
// the parent's own mode is accepted.
func Narrower(parent, child Mode) bool {
	if child == parent {
		return true
	}
	switch parent {
	case ModeBypass, ModeAcceptEdits, ModeAuto:
		return false
	}
	pr, ok1 := modeRank()[parent]
	cr, ok2 := modeRank()[child]
	return ok1 && ok2 && cr <= pr
}
