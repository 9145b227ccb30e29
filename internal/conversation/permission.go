package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/authorize"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
)

// CanUseTool is asked about each tool call that no rule, mode or hook has
// decided. It may block until a person answers; it must return when ctx is
// done. An error denies the call and is shown to the model.
type CanUseTool func(ctx context.Context, req PermissionRequest) (PermissionResult, error)

// PermissionRequest is agentloop.PermissionRequest as the session reads it; the fields are
// documented there.
type PermissionRequest struct {
	ToolName       string
	Input          json.RawMessage
	ToolUseID      string
	Suggestions    []PermissionUpdate
	BlockedPath    string
	DisplayName    string
	Description    string
	DecisionReason string
	AgentID        string
}

// PermissionResult is agentloop.PermissionResult as the session reads it; the fields are
// documented there.
type PermissionResult struct {
	Behavior           string
	UpdatedInput       json.RawMessage
	UpdatedPermissions []PermissionUpdate
	Message            string
	Interrupt          bool
}

// PermissionUpdate is a change of permissions, in the reference's wire form.
type PermissionUpdate = settings.PermissionUpdate

// Allow returns a PermissionResult that lets the call run as asked.
func Allow() PermissionResult { return PermissionResult{Behavior: string(vocab.Allow)} }

// Deny returns a PermissionResult that refuses the call, telling the model
// why.
func Deny(message string) PermissionResult {
	return PermissionResult{Behavior: string(vocab.Deny), Message: message}
}

// ErrPermissionModeDisabled is matched (errors.Is) by the error of a
// session that would start in a permission mode a settings file turned
// off, and of a request to switch to such a mode (Client.SetPermissionMode,
// a setMode permission update from CanUseTool or a PermissionRequest
// hook): bypassPermissions when a file sets
// permissions.disableBypassPermissionsMode to "disable", auto when one sets
// permissions.disableAutoMode to "disable". The error is a
// *PermissionModeDisabledError naming the setting and the file. Any
// settings source may turn a mode off, and none can turn it back on.
var ErrPermissionModeDisabled = errors.New("agentloop: permission mode disabled by settings")

// PermissionModeDisabledError is the error of a mode a settings file
// turned off; it matches ErrPermissionModeDisabled.
type PermissionModeDisabledError struct {
	Mode    PermissionMode  // bypassPermissions or auto
	Setting string          // "permissions.disableBypassPermissionsMode" or "permissions.disableAutoMode"
	Source  settings.Source // the source of the file that says "disable"
	File    string          // that file as a user names it; "--settings" for inline JSON
}

// Error reads `permission mode <mode> is disabled: <file> sets <setting>
// to "disable"`.
func (e *PermissionModeDisabledError) Error() string {
	return fmt.Sprintf("permission mode %s is disabled: %s sets %s to %q", e.Mode, e.File, e.Setting, settings.DisableValue)
}

// Is reports whether target is ErrPermissionModeDisabled.
func (e *PermissionModeDisabledError) Is(target error) bool {
	return target == ErrPermissionModeDisabled
}

// disabledModes are the modes the settings turned off, each with its
// error, for the checker (which refuses to start in or switch to them).
func disabledModes(st *settings.Settings) map[permission.Mode]error {
	if st == nil {
		return nil
	}
	out := map[permission.Mode]error{}
	for _, d := range []struct {
		mode    PermissionMode
		setting string
		by      *settings.ModeDisable
	}{
		{PermissionBypass, "permissions.disableBypassPermissionsMode", st.Permissions.DisableBypassPermissionsMode},
		{PermissionAuto, "permissions.disableAutoMode", st.Permissions.DisableAutoMode},
	} {
		if d.by != nil {
			out[permission.Mode(d.mode)] = &PermissionModeDisabledError{Mode: d.mode, Setting: d.setting,
				Source: d.by.Source, File: d.by.File}
		}
	}
	return out
}

// newChecker builds the permission checker from the options and settings.
// Starting in a mode the settings turned off fails (fail closed: the
// session does not fall back to another mode) with a
// *PermissionModeDisabledError.
func (s *Session) newChecker(st *settings.Settings) (*permission.Checker, error) {
	cfg, err := s.checkerConfig(st)
	if err != nil {
		return nil, err
	}
	return newCheckerFrom(cfg)
}

// newCheckerFrom compiles the checker of cfg. It and checkerConfig are
// functions of their own (not inlined): the configuration is built in a
// frame that is gone when the rules compile, which resolves paths, deep in
// the stack of the session's goroutine (see engine's streamOnce).
//
//go:noinline
func newCheckerFrom(cfg *permission.Config) (*permission.Checker, error) {
	c, err := permission.New(*cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: permissions: %w", ErrInvalidOption, err)
	}
	return c, nil
}

// checkerConfig is the configuration of the session's checker: the mode,
// the rules of the options and of the settings st, the directories.
//
//go:noinline
func (s *Session) checkerConfig(st *settings.Settings) (*permission.Config, error) {
	disabled := withBypassAsRoot(disabledModes(st)) // root without IS_SANDBOX: bypass_root.go
	if err := disabled[permission.Mode(s.mode)]; err != nil {
		return nil, fmt.Errorf("agentloop: %w", err)
	}
	noPrompt := s.promptsOff(st) // permission_block.go; before DisallowedTools is read
	if st != nil {
		s.diag.Add(DiagSettings, unhonouredPermissionKeys(st.Permissions.Extra))
	}
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
	if r, ok := s.resultsReadRule(); ok {
		rs.Sources = append(rs.Sources, r)
	}
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
	return &permission.Config{
		Mode:        permission.Mode(s.mode),
		Rules:       rs,
		Dirs:        append([]string{s.env.Cwd}, s.env.AdditionalDirs...),
		Home:        s.env.Home,
		AllowBypass: s.mode == PermissionBypass,
		Disabled:    disabled,
		Classifier:  modelClassifier{s},
		Block:       s.blockConfig(st), // permission_block.go
		NoPrompt:    noPrompt,
		// autoMode.classifyAllShell (classifier_rules.go).
		ClassifyAllShell: s.autoMode != nil && s.autoMode.ClassifyAllShell,
		// Every settings file the session read, wherever it lies, is
		// protected like .claude (sandbox_config.go lists the same).
		Protected: s.sharedConfigPaths(st),
	}, nil
}

// Test seams for the security tests' mutation run (see export_test.go).
// They are process-wide and never set outside tests.
var (
	// testForceAllow makes authorize allow every call at once, before any
	// hook, rule, mode or callback is consulted. Code that enforces
	// permissions elsewhere must stand aside too while it is set: NewSession
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
func (s *Session) currentMode() PermissionMode {
	if s.checker == nil {
		return s.mode
	}
	return PermissionMode(s.checker.Mode())
}

// authorize decides on a tool call of the main loop; see authorizeAs.
func (s *Session) authorize(ctx context.Context, call *engine.ToolCall) engine.Decision {
	return s.authorizeAs(ctx, lineage.Agent{}, call)
}

// authorizeAs decides on a tool call of the loop a (the main loop or a
// subagent, at any depth: every loop of the session shares this checker,
// mode and hooks) in the reference's order, which internal/authorize
// implements: PreToolUse hooks, then deny rules, ask rules, the mode and
// allow rules (the checker), then, for calls still undecided,
// PermissionRequest hooks and the CanUseTool callback. With nobody to ask,
// the call is denied. Hooks and CanUseTool see a's agent_id.
func (s *Session) authorizeAs(ctx context.Context, a lineage.Agent, call *engine.ToolCall) engine.Decision {
	if testForceAllow.Load() {
		return engine.Decision{Allow: true, Source: "config", ReasonType: "test"}
	}
	o := s.authorizerFor(a).Decide(ctx, authCall(a, call))
	if o.Allow {
		s.noteChecked(call, o.Decided, o.Checked, o.Decision.Input)
	}
	return o.Decision
}

// preToolUse runs the PreToolUse hooks on call c of the loop a. Not
// inlined: the hooks' input is built in a frame of its own, only when a
// hook will read it (the decision is deep in a turn's stack; see authCall).
//
//go:noinline
func (s *Session) preToolUse(ctx context.Context, a lineage.Agent, c *authorize.Call) hooks.PreToolUseResult {
	return s.hooks.PreToolUse(ctx, hooks.PreToolUseInput{Base: s.hookBaseFor(a), ToolName: c.Name,
		ToolInput: c.Input, ToolUseID: c.ID, MCPServer: s.mcpServerOf(c.Name)})
}

// authCall is call of the loop a as the authoriser takes it. Made here
// (not inlined), its tool's Info and the Call are not in authorizeAs's
// frame, under the whole decision: a decision is made deep in a turn's
// stack, where every byte adds to the stack each session's goroutine grows
// to.
//
//go:noinline
func authCall(a lineage.Agent, call *engine.ToolCall) *authorize.Call {
	info := call.Tool.Info()
	return &authorize.Call{ID: call.ID, Name: call.Name, Input: json.RawMessage(call.Input),
		ReadOnly: info.ReadOnly, Alone: call.Alone, AgentID: a.ID,
		RequiresUserInteraction: info.RequiresUserInteraction, Policy: info.PermissionPolicy}
}

// authorizer wires the session's hooks, checker, sandbox, callback and
// diagnostics into the authorisation order for the loop a.
// cachedAuthorizer is the main loop's Authorizer with what it was made
// for: the loop (its Agent) and the checker's denyInsteadOfPrompting,
// which settings can change.
type cachedAuthorizer struct {
	agent  lineage.Agent
	noAsk  bool
	author *authorize.Authorizer
}

// authorizerFor returns the Authorizer of the loop a. The main loop's is
// made once and kept while it would be made the same (an Authorizer is
// only read once made, so concurrent calls share it): it is asked at every
// tool call, and making one makes a closure for each of its hooks.
func (s *Session) authorizerFor(a lineage.Agent) *authorize.Authorizer {
	if !a.Main() {
		return s.authorizer(a)
	}
	noAsk := s.checker != nil && s.checker.NoPrompt()
	kept := &s.run().mainAuth
	if c := kept.Load(); c != nil && c.agent == a && c.noAsk == noAsk {
		return c.author
	}
	az := s.authorizer(a)
	kept.Store(&cachedAuthorizer{agent: a, noAsk: az.DenyInsteadOfPrompting, author: az})
	return az
}

func (s *Session) authorizer(a lineage.Agent) *authorize.Authorizer {
	az := &authorize.Authorizer{
		PreToolUse: func(ctx context.Context, c authorize.Call) hooks.PreToolUseResult {
			if !s.hooks.Matches(hooks.PreToolUse, c.Name) {
				return hooks.PreToolUseResult{} // what no hook gives, without building the input
			}
			return s.preToolUse(ctx, a, &c)
		},
		Checker:       s.checkerFor(a), // a subagent's own mode (projectfiles.go)
		SandboxAllows: s.sandboxAutoAllows,
		SandboxEscape: s.sandboxEscape,
		PermissionRequest: func(ctx context.Context, c authorize.Call, input json.RawMessage, sug []settings.PermissionUpdate) hooks.PermissionRequestResult {
			return s.hooks.PermissionRequest(ctx, hooks.PermissionRequestInput{Base: s.hookBaseFor(a), ToolName: c.Name,
				ToolInput: input, PermissionSuggestions: sug, ToolUseID: c.ID, MCPServer: s.mcpServerOf(c.Name)})
		},
		Apply: s.applyUpdates,
		Diag:  func(text string) { s.diag.Add(DiagHook, text) },
		// The block settings and denyInsteadOfPrompting (permission_block.go).
		Blocked:                s.checker.Blocked,
		DenyInsteadOfPrompting: s.checker != nil && s.checker.NoPrompt(),
	}
	if cb := s.opts.CanUseTool; cb != nil {
		az.CanUseTool = func(ctx context.Context, r authorize.Request) (authorize.Answer, error) {
			res, err := cb(ctx, PermissionRequest{ToolName: r.ToolName, Input: r.Input, ToolUseID: r.ToolUseID,
				Suggestions: r.Suggestions, BlockedPath: s.outsideWorkingDirs(r.BlockedPath, r.ReasonType), DecisionReason: r.DecisionReason,
				AgentID: r.AgentID, DisplayName: displayName(r.ToolName), Description: s.callDescription(r.ToolName, r.Input)})
			return authorize.Answer{Behavior: res.Behavior, UpdatedInput: res.UpdatedInput,
				UpdatedPermissions: res.UpdatedPermissions, Message: res.Message, Interrupt: res.Interrupt}, err
		}
	} else if s.opts.PermissionPromptTool != "" {
		az.CanUseTool = s.askPromptTool // permission_prompt_tool.go
	}
	return az
}

// applyUpdates applies permission updates to the session's checker, and
// writes those with a settings-file destination to that file.
func (s *Session) applyUpdates(ups []PermissionUpdate) error {
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
		if pu.Behavior == permission.Allow && (pu.Type == permission.UpdateAddRules || pu.Type == permission.UpdateReplaceRules) &&
			s.policyGrantsOff("an allow rule added while the session runs") { // managed_policy.go
			continue // allowManagedPermissionRulesOnly: only the policy grants
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

// outsideWorkingDirs returns p when it lies outside the session's working
// directories (as the permission checker has them now), else "". The
// checker shows a path that a link leads out of in its physical form,
// which the lexical test keeps; a path it judged outside the working
// directories (reason workingDir) is kept whatever its form, so that the
// lexical test can only drop a path, never vouch for one.
func (s *Session) outsideWorkingDirs(p, reasonType string) string {
	if p == "" || s.checker == nil || reasonType == permission.ReasonWorkingDir {
		return p
	}
	clean := filepath.Clean(p)
	for _, d := range s.checker.Dirs() {
		if rel, err := filepath.Rel(filepath.Clean(d), clean); err == nil && filepath.IsLocal(rel) {
			return ""
		}
	}
	return p
}

// displayName is PermissionRequest.DisplayName of the tool name.
func displayName(toolName string) string {
	if strings.HasPrefix(toolName, "mcp__") {
		return ""
	}
	return toolName
}

// callDescription is PermissionRequest.Description of a call.
func (s *Session) callDescription(toolName string, input json.RawMessage) string {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Command      string `json:"command"`
		Description  string `json:"description"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	switch toolName {
	case "Bash":
		if strings.TrimSpace(in.Description) != "" {
			return in.Description
		}
		return in.Command
	case "Read", "Write", "Edit", "MultiEdit":
		return s.relToCwd(in.FilePath)
	case "NotebookEdit":
		return s.relToCwd(in.NotebookPath)
	}
	return ""
}

// relToCwd returns p relative to the session's working directory when it
// lies inside it, else p as given.
func (s *Session) relToCwd(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(s.env.Cwd, filepath.Clean(p)); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}
