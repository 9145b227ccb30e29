package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
)

// Policy is the per-call configuration the root package builds today. It
// is a thin wrapper over Checker for a session in which nobody can be
// asked (print mode without canUseTool): what the checker would ask is
// refused. New code should keep one Checker per session instead, so that
// permission updates and mode changes carry over between calls.
type Policy struct {
	Mode  string   // default, acceptEdits, plan, dontAsk, bypassPermissions, auto ("" = default)
	Allow []string // allow rules (allowedTools)
	Deny  []string // deny rules (disallowedTools with a specifier)
	Ask   []string // ask rules
	Dirs  []string // the working directory first, then additional directories
}

// CheckResult is the outcome of Policy.Check.
type CheckResult struct {
	Allow      bool
	Message    string // for refusals: what the model is told
	ReasonType string // rule, mode, subcommandResults, …; empty when an ask was refused
}

// Check decides on a call of toolName with input; readOnly is the tool's
// own annotation. Malformed rules are skipped.
func (p *Policy) Check(toolName string, input json.RawMessage, readOnly bool) CheckResult {
	var rs RuleSet
	for _, l := range []struct {
		b     Behavior
		rules []string
	}{{Deny, p.Deny}, {Ask, p.Ask}, {Allow, p.Allow}} {
		for _, s := range l.rules {
			if v, err := ParseRule(s); err == nil {
				_ = rs.Add(SourceCLI, l.b, v)
			}
		}
	}
	mode, err := ParseMode(p.Mode)
	if err != nil {
		mode = ModeDefault
	}
	var dirs []string
	for _, d := range p.Dirs {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	c, _ := New(Config{Mode: mode, Rules: rs, Dirs: dirs, AllowBypass: true})
	if c == nil {
		return CheckResult{Message: msgTool(toolName)}
	}
	d := c.Decide(context.Background(), Call{Tool: toolName, Input: input, ReadOnly: readOnly})
	switch d.Behavior {
	case Allow:
		return CheckResult{Allow: true, ReasonType: d.ReasonType}
	case Deny:
		return CheckResult{Message: d.Message, ReasonType: d.ReasonType}
	}
	return CheckResult{Message: d.Message}
}
