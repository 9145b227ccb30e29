package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/settings"
)

// CanUseTool is asked about each tool call that no rule, mode or hook has
// decided. It may block until a person answers; it must return when ctx is
// done. An error denies the call and is shown to the model.
type CanUseTool func(ctx context.Context, req PermissionRequest) (PermissionResult, error)

// PermissionRequest describes a call that needs approval.
type PermissionRequest struct {
	ToolName  string
	Input     json.RawMessage
	ToolUseID string
	// Suggestions are permission updates that would let such calls run
	// without asking next time.
	Suggestions []PermissionUpdate
	// BlockedPath is the file path that needs approval, if any.
	BlockedPath string
	// DecisionReason says why the call was not decided by the rules.
	DecisionReason string
	// AgentID names the subagent that made the call; empty for the main
	// loop.
	AgentID string
}

// PermissionResult answers a PermissionRequest.
type PermissionResult struct {
	// Behavior is "allow" or "deny".
	Behavior string
	// UpdatedInput, when set on allow, replaces the call's input (it is
	// validated again).
	UpdatedInput json.RawMessage
	// UpdatedPermissions are applied on allow: rules added, replaced or
	// removed, the mode changed, directories added, in the session or in
	// the settings file of their destination.
	UpdatedPermissions []PermissionUpdate
	// Message is what the model is told on deny; Interrupt also ends the
	// run.
	Message   string
	Interrupt bool
}

// PermissionUpdate is a change of permissions, in the reference's wire form.
type PermissionUpdate = settings.PermissionUpdate

// Allow returns a PermissionResult that lets the call run as asked.
func Allow() PermissionResult { return PermissionResult{Behavior: "allow"} }

// Deny returns a PermissionResult that refuses the call, telling the model
// why.
func Deny(message string) PermissionResult {
	return PermissionResult{Behavior: "deny", Message: message}
}

// newChecker builds the permission checker from the options and settings.
func (s *session) newChecker(st *settings.Settings) (*permission.Checker, error) {
	var rs permission.RuleSet
	cli := permission.SourceRules{Source: permission.SourceCLI, Allow: s.opts.AllowedTools}
	// A disallowed name with a specifier denies matching calls; a bare
	// name removes the tool from every loop's list (the lineage) and is
	// also a deny rule, so no loop of the session can run it whatever a
	// hook or an agent definition says.
	for _, r := range s.opts.DisallowedTools {
		if strings.TrimSpace(r) != "" {
			cli.Deny = append(cli.Deny, r)
		}
	}
	rs.Sources = append(rs.Sources, cli)
	if st != nil {
		bySource := map[settings.Source]*permission.SourceRules{}
		var order []settings.Source
		add := func(r settings.Rule) *permission.SourceRules {
			sr := bySource[r.Source]
			if sr == nil {
				sr = &permission.SourceRules{Source: permission.Source(r.Source), BaseDir: r.Root}
				bySource[r.Source] = sr
				order = append(order, r.Source)
			}
			return sr
		}
		for _, r := range st.Permissions.Allow {
			sr := add(r)
			sr.Allow = append(sr.Allow, r.Value)
		}
		for _, r := range st.Permissions.Deny {
			sr := add(r)
			sr.Deny = append(sr.Deny, r.Value)
		}
		for _, r := range st.Permissions.Ask {
			sr := add(r)
			sr.Ask = append(sr.Ask, r.Value)
		}
		for _, src := range order {
			rs.Sources = append(rs.Sources, *bySource[src])
		}
	}
	c, err := permission.New(permission.Config{
		Mode:        permission.Mode(s.mode),
		Rules:       rs,
		Dirs:        append([]string{s.env.Cwd}, s.env.AdditionalDirs...),
		Home:        s.env.Home,
		AllowBypass: s.mode == PermissionBypass,
		Classifier:  modelClassifier{s},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: permissions: %v", ErrInvalidOption, err)
	}
	return c, nil
}

// Test seams for the security tests' mutation run (see export_test.go).
// They are process-wide and never set outside tests.
var (
	// testForceAllow makes authorize allow every call at once, before any
	// hook, rule, mode or callback is consulted. Code that enforces
	// permissions elsewhere must stand aside too while it is set: newSession
	// drops Options.DisallowedTools (so no loop's tool list loses a tool)
	// and leaves tool.Env.ReadDenied nil (so Read, Grep and Glob filter
	// nothing).
	testForceAllow atomic.Bool
	// testDisableSandbox runs Bash commands without the kernel sandbox, in
	// every mode, plan mode included.
	testDisableSandbox atomic.Bool
)

// currentMode is the session's permission mode now (it can change through
// permission updates).
func (s *session) currentMode() PermissionMode {
	if s.checker == nil {
		return s.mode
	}
	return PermissionMode(s.checker.Mode())
}

// authorize decides on a tool call of the main loop; see authorizeAs.
func (s *session) authorize(ctx context.Context, call *engine.ToolCall) engine.Decision {
	return s.authorizeAs(ctx, lineage.Agent{}, call)
}

// authorizeAs decides on a tool call of the loop a (the main loop or a
// subagent, at any depth: every loop of the session shares this checker,
// mode and hooks) in the reference's order: PreToolUse hooks, then deny
// rules, ask rules, the mode and allow rules (the checker), then, for calls
// still undecided, PermissionRequest hooks and the CanUseTool callback.
// With nobody to ask, the call is denied. Hooks and CanUseTool see a's
// agent_id.
func (s *session) authorizeAs(ctx context.Context, a lineage.Agent, call *engine.ToolCall) (dec engine.Decision) {
	if testForceAllow.Load() {
		return engine.Decision{Allow: true, Source: "config", ReasonType: "test"}
	}
	input := json.RawMessage(call.Input)
	var d permission.Decision
	defer func() {
		if dec.Allow {
			s.noteChecked(call, input, d, dec.Input)
		}
	}()
	pre := s.hooks.PreToolUse(ctx, hooks.PreToolUseInput{Base: s.hookBaseFor(a), ToolName: call.Name,
		ToolInput: input, ToolUseID: call.ID})
	out := engine.Decision{Context: pre.AdditionalContext, Halt: halt(pre.Common)}
	if pre.UpdatedInput != nil {
		input, out.Input = pre.UpdatedInput, pre.UpdatedInput
	}
	deny := func(source, reason, msg string, quiet bool) engine.Decision {
		out.Allow, out.Source, out.ReasonType, out.Message, out.Quiet = false, source, reason, msg, quiet
		return out
	}
	allow := func(source, reason string) engine.Decision {
		out.Allow, out.Source, out.ReasonType = true, source, reason
		return out
	}
	pcall := permission.Call{Tool: call.Name, Input: input, ReadOnly: call.Tool.Info().ReadOnly}
	switch pre.Decision {
	case hooks.Deny, hooks.Defer:
		return deny("hook", "hook", pre.Message, true)
	case hooks.Ask:
		d = permission.Decision{Behavior: permission.Ask, ReasonType: "hook", Reason: pre.Reason,
			Message: fmt.Sprintf("A hook asked for approval of this %s call, and there is no one to ask: %s", call.Name, pre.Reason)}
	case hooks.Allow:
		// A hook's approval skips the mode and allow rules, never the deny
		// and ask rules.
		d = s.checker.Decide(ctx, pcall)
		if d.Behavior == permission.Allow || d.ReasonType != permission.ReasonRule {
			return allow("hook", "hook")
		}
	default:
		d = s.checker.Decide(ctx, pcall)
	}
	switch d.Behavior {
	case permission.Allow:
		return allow("config", d.ReasonType)
	case permission.Deny:
		return deny("config", d.ReasonType, d.Message, false)
	}
	if call.Name == "Bash" && pre.Decision != hooks.Ask && s.sandboxAutoAllows(input, d) {
		return allow("config", "sandbox")
	}
	return s.ask(ctx, a, call, input, d, out)
}

// ask puts an undecided call to the PermissionRequest hooks and then to
// the CanUseTool callback.
func (s *session) ask(ctx context.Context, a lineage.Agent, call *engine.ToolCall, input json.RawMessage, d permission.Decision, out engine.Decision) engine.Decision {
	suggestions := toSettingsUpdates(d.Suggestions)
	pr := s.hooks.PermissionRequest(ctx, hooks.PermissionRequestInput{Base: s.hookBaseFor(a), ToolName: call.Name,
		ToolInput: input, PermissionSuggestions: suggestions, ToolUseID: call.ID})
	switch pr.Decision {
	case hooks.Allow:
		if err := s.applyUpdates(pr.UpdatedPermissions); err != nil {
			out.Allow, out.Source, out.ReasonType, out.Message = false, "hook", "hook", err.Error()
			return out
		}
		out.Allow, out.Source, out.ReasonType = true, "hook", "hook"
		if pr.UpdatedInput != nil {
			out.Input = pr.UpdatedInput
		}
		return out
	case hooks.Deny:
		out.Allow, out.Source, out.ReasonType, out.Message, out.Interrupt = false, "hook", "hook", pr.Message, pr.Interrupt
		return out
	}
	if s.opts.CanUseTool == nil {
		out.Allow, out.Source, out.ReasonType, out.Message = false, "config", d.ReasonType, d.Message
		return out
	}
	res, err := s.opts.CanUseTool(ctx, PermissionRequest{ToolName: call.Name, Input: input, ToolUseID: call.ID,
		Suggestions: suggestions, BlockedPath: d.BlockedPath, DecisionReason: d.Reason, AgentID: a.ID})
	out.Source, out.ReasonType = "user", "user"
	switch {
	case err != nil:
		out.Message = fmt.Sprintf("The permission check for %s failed: %v", call.Name, err)
	case res.Behavior == "allow":
		if err := s.applyUpdates(res.UpdatedPermissions); err != nil {
			out.Message = err.Error()
			return out
		}
		out.Allow = true
		if res.UpdatedInput != nil {
			out.Input = res.UpdatedInput
		}
	case res.Behavior == "deny":
		out.Message, out.Interrupt = res.Message, res.Interrupt
		if out.Message == "" {
			out.Message = "The user denied this " + call.Name + " call."
		}
	default:
		out.Message = fmt.Sprintf("The permission check for %s answered %q; want allow or deny.", call.Name, res.Behavior)
	}
	return out
}

// applyUpdates applies permission updates to the session's checker, and
// writes those with a settings-file destination to that file.
func (s *session) applyUpdates(ups []PermissionUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	var file []settings.PermissionUpdate
	for _, u := range ups {
		var pu permission.Update
		b, _ := json.Marshal(u)
		if err := json.Unmarshal(b, &pu); err != nil {
			return fmt.Errorf("permission update: %w", err)
		}
		if err := s.checker.Apply(pu); err != nil {
			return fmt.Errorf("permission update: %w", err)
		}
		if u.Destination.Persistent() {
			file = append(file, u)
		}
	}
	if len(file) > 0 {
		if err := settings.Apply(settings.Options{Cwd: s.env.Cwd, Home: s.env.Home}, file...); err != nil {
			return fmt.Errorf("saving permission updates: %w", err)
		}
	}
	return nil
}

func toSettingsUpdates(in []permission.Update) []settings.PermissionUpdate {
	if len(in) == 0 {
		return nil
	}
	var out []settings.PermissionUpdate
	b, _ := json.Marshal(in)
	_ = json.Unmarshal(b, &out)
	return out
}
