package engine

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestStopRules checks each stop rule alone, on a run in the state that
// makes it hold and in one that does not: which rule of its list ends the
// run first, and with what result.
func TestStopRules(t *testing.T) {
	type want struct {
		Rule     string // "" when the run goes on
		Subtype  string
		Terminal string
	}
	for _, tc := range []struct {
		name  string
		rules []stopRule
		cfg   func(*Config)
		state func(r *run, cancel context.CancelFunc)
		want  want
	}{
		{name: "nothing holds before a call", rules: beforeCallRules},
		{name: "cancelled", rules: beforeCallRules,
			state: func(r *run, cancel context.CancelFunc) { cancel() },
			want:  want{"cancelled", message.ResultErrorDuringExecution, message.TerminalAborted}},
		{name: "nothing holds after tools", rules: afterToolsRules, cfg: func(c *Config) { c.MaxTurns = 3 },
			state: func(r *run, _ context.CancelFunc) { r.rounds = 2 }},
		{name: "max turns", rules: afterToolsRules, cfg: func(c *Config) { c.MaxTurns = 3 },
			state: func(r *run, _ context.CancelFunc) { r.rounds = 3 },
			want:  want{"max turns", message.ResultErrorMaxTurns, message.TerminalMaxTurns}},
		{name: "hook halt before max turns", rules: afterToolsRules, cfg: func(c *Config) { c.MaxTurns = 1 },
			state: func(r *run, _ context.CancelFunc) { r.rounds, r.halt = 1, &Halt{Reason: "enough"} },
			want:  want{"hook halt", message.ResultSuccess, message.TerminalHookStopped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Provider: &scripted{}, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &run{s: s, ctx: ctx, emit: func(message.Message) bool { return true }, start: s.cfg.Now(), numTurns: 1}
			if tc.state != nil {
				tc.state(r, cancel)
			}
			var got want
			for _, rule := range tc.rules {
				if e, stop := rule.check(r); stop {
					got = want{Rule: rule.name, Subtype: e.res.Subtype, Terminal: e.res.TerminalReason}
					break
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("first rule to hold (-want +got):\n%s", diff)
			}
			if e, stop := r.firstStop(tc.rules); stop != (tc.want.Rule != "") || (stop && e.res.Subtype != tc.want.Subtype) {
				t.Errorf("firstStop = %v, %+v; want the same as the rules one by one", stop, e.res)
			}
		})
	}
}
