package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/uuid"
)

// newDispatcher builds the session's hook dispatcher from the Go callbacks
// of Options.Hooks, the command hooks of the loaded settings and those of
// the plugins (loadPlugins has run).
func (s *Session) newDispatcher(commands map[string][]settings.HookMatcher) (*hooks.Dispatcher, error) {
	commands = s.withPluginHooks(commands) // plugins_components.go
	if len(commands) == 0 {
		commands = nil // the dispatcher keeps no empty map of the settings'
	}
	cfg := hooks.Config{
		Callbacks:   s.opts.Hooks,
		Commands:    commands,
		Cwd:         s.env.Cwd,
		SessionID:   s.env.SessionID,
		Env:         s.env.Environ,
		Prompt:      s.askModel,
		ReportError: func(text string, cause error) { s.diag.Add(hookFailureTag(cause), text) },
		// A hook's systemMessage is for the user: the stream shows it
		// as system/informational, the reference's shape for it.
		SystemMessage: func(text string) { s.diag.Add(DiagHookMessage, text) },
		Spans:         s.opts.Observer,
		// Notes on how a hook ran (an allow dropped because its "if"
		// condition could not be judged) go to the log at debug level.
		Debug: func(text string) {
			if l := s.opts.Logger; l != nil {
				l.LogAttrs(context.Background(), slog.LevelDebug, text, slog.String("tag", "hook"),
					slog.String("session_id", s.env.SessionID))
			}
		},
	}
	// The managed policy's limits on http hooks (hooks/policy.go).
	cfg.Policy = s.managed().HTTPHooks
	if s.opts.ConfineProjectConfig {
		cfg.Start = s.startHook // confine_project.go
	}
	if s.transcript != nil {
		// Empty when persistence is off: there is no transcript file.
		cfg.TranscriptPath = s.transcript.path
	}
	// Hook output over hooks.MaxOutputChars is saved where oversized tool
	// results go (results_dir.go), which the model may Read without
	// asking; setupResultsDir has run.
	cfg.OverflowDir = s.env.ResultsDir
	if s.opts.IncludeHookEvents {
		cfg.Observer = func(n hooks.Notice) {
			if e := s.engine(); e != nil {
				e.Notify(&message.System{Subtype: n.Subtype, SessionID: s.env.SessionID,
					UUID: uuid.NewString(), Data: n.Fields()})
			}
		}
	}
	return hooks.New(cfg)
}

// HookCallbackError is the error a Go hook callback returns when it
// stands for a hook registered elsewhere — a host's callback reached over
// a control protocol, as the agentloop CLI's hooks from an SDK host are —
// and that hook failed (the host answered with an error or with something
// that is not hook output, or could not be reached). The hook's answer is
// treated as empty, as for any callback error, but the failure is
// reported with the tag DiagHookCallbackFailed rather than DiagHookFailed.
// Err says what went wrong; the error's text is Err's.
type HookCallbackError struct {
	Err error
}

// Error returns Err's text.
func (e *HookCallbackError) Error() string {
	if e == nil || e.Err == nil {
		return "hook callback failed"
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *HookCallbackError) Unwrap() error { return e.Err }

// hookFailureTag is the diagnostic tag of a hook failure whose cause is
// cause (nil unless a Go callback returned an error).
func hookFailureTag(cause error) string {
	var hce *HookCallbackError
	if errors.As(cause, &hce) {
		return DiagHookCallbackFailed
	}
	return DiagHookFailed
}

// promptHookMaxTokens bounds a prompt hook's answer, a short JSON verdict.
const promptHookMaxTokens = 512

// askModel is the model call of prompt hooks (hooks.Config.Prompt): one
// turn through the session's provider, whose cost counts towards the
// session's.
func (s *Session) askModel(ctx context.Context, name, system, user string) (string, error) {
	m := pricing.Resolve(name)
	if err := s.helperModelAllowed(m, "a prompt hook's model"); err != nil { // managed_policy.go
		return "", err
	}
	resp, err := s.env.Provider.Stream(ctx, &model.Request{
		Model:     m,
		MaxTokens: promptHookMaxTokens,
		Stream:    true,
		System:    []model.Content{model.TextBlock(system)},
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(user)}}},
	}, model.NopHandler{})
	if err != nil {
		return "", fmt.Errorf("prompt hook model call: %w", err)
	}
	if e := s.engine(); e != nil {
		e.AddUsage(resp.Model, resp.Usage)
	}
	return resp.Text(), nil
}

// base is the common part of every hook input. The session id and
// transcript are the current conversation's: /clear changes them.
func (s *Session) hookBase() hooks.Base {
	b := hooks.Base{SessionID: s.env.SessionID, PermissionMode: string(s.currentMode())}
	if s.transcript != nil {
		b.TranscriptPath = s.transcript.path
	}
	return b
}

// hookPoints connects the engine's hook points to the dispatcher.
func (s *Session) hookPoints() engine.HookPoints {
	d := s.hooks
	return engine.HookPoints{
		PromptSubmit: s.promptSubmit, // command_hooks.go
		AfterTool:    s.afterTool(lineage.Agent{}),
		BeforeStop: func(ctx context.Context, active bool) engine.StopVerdict {
			r := d.Stop(ctx, hooks.StopInput{Base: s.hookBase(), StopHookActive: active})
			return stopVerdict(r, "Stop")
		},
	}
}

// stopVerdict turns the result of Stop or SubagentStop hooks into the
// engine's verdict: a halt ends the run, a block (or added context) gives
// the agent the reason as a new turn and keeps it going.
func stopVerdict(r hooks.StopResult, event string) engine.StopVerdict {
	switch {
	case r.Halt:
		return engine.StopVerdict{Halt: &engine.Halt{Reason: r.StopReason}}
	case r.Blocked:
		return engine.StopVerdict{Continue: true, Text: event + " hook feedback:\n" + r.Reason}
	case len(r.AdditionalContext) > 0:
		return engine.StopVerdict{Continue: true, Text: strings.Join(r.AdditionalContext, "\n")}
	}
	return engine.StopVerdict{}
}

// hookBaseFor is the common part of a hook input of the loop a: the main
// loop's for the zero Agent, else with the subagent's agent_id and
// agent_type.
func (s *Session) hookBaseFor(a lineage.Agent) hooks.Base {
	b := s.hookBase()
	b.AgentID, b.AgentType = a.ID, a.Type
	return b
}

// afterTool is the AfterTool hook point of the loop a: PostToolUse, or
// PostToolUseFailure for a failed call, with a's identity.
func (s *Session) afterTool(a lineage.Agent) func(ctx context.Context, call *engine.ToolCall, out *engine.ToolOutput) *engine.Halt {
	d := s.hooks
	return func(ctx context.Context, call *engine.ToolCall, out *engine.ToolOutput) *engine.Halt {
		if out.Failed {
			r := d.PostToolUseFailure(ctx, hooks.PostToolUseFailureInput{Base: s.hookBaseFor(a), ToolName: call.Name,
				ToolInput: call.Input, ToolUseID: call.ID, Error: out.Result.ResultText(), MCPServer: s.mcpServerOf(call.Name)})
			out.Context = append(out.Context, r.AdditionalContext...)
			return halt(r.Common)
		}
		if !d.Matches(hooks.PostToolUse, call.Name) {
			return nil // nobody reads the response: do not encode it
		}
		resp, _ := json.Marshal(out.Structured)
		if out.Structured == nil {
			resp, _ = json.Marshal(out.Result.ResultText())
		}
		r := d.PostToolUse(ctx, hooks.PostToolUseInput{Base: s.hookBaseFor(a), ToolName: call.Name,
			ToolInput: call.Input, ToolResponse: resp, ToolUseID: call.ID, MCPServer: s.mcpServerOf(call.Name)})
		if r.UpdatedToolOutput != nil {
			replaceOutput(out, r.UpdatedToolOutput)
		}
		if r.Blocked {
			out.Context = append(out.Context, "PostToolUse:"+call.Name+" hook error: "+r.Reason)
		}
		out.Context = append(out.Context, r.AdditionalContext...)
		return halt(r.Common)
	}
}

// subagentHooks are the hook points of the subagent a: PostToolUse and
// PostToolUseFailure as in the main loop, and SubagentStop where the main
// loop has Stop (a block keeps the subagent going with the reason, as Stop
// does for the main loop). last returns the subagent's last reply text;
// stopped is set once SubagentStop hooks have run.
func (s *Session) subagentHooks(a lineage.Agent, last func() string, stopped *bool) engine.HookPoints {
	return engine.HookPoints{
		AfterTool: s.afterTool(a),
		BeforeStop: func(ctx context.Context, active bool) engine.StopVerdict {
			*stopped = true
			r := s.lin.Hooks().SubagentStop(ctx, hooks.SubagentStopInput{Base: s.hookBaseFor(a), StopHookActive: active,
				AgentID: a.ID, AgentType: a.Type, LastAssistantMessage: last()})
			return stopVerdict(r, "SubagentStop")
		},
	}
}

func halt(c hooks.Common) *engine.Halt {
	if !c.Halt {
		return nil
	}
	return &engine.Halt{Reason: c.StopReason}
}

// replaceOutput puts a hook's updatedToolOutput in place of the tool's
// output: a JSON string becomes the text the model sees; any other value
// is shown as JSON.
func replaceOutput(out *engine.ToolOutput, raw json.RawMessage) {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		text = string(raw)
	}
	out.Structured = raw
	out.Result.Text, out.Result.Blocks = text, nil
}

// startSource is the SessionStart source: "resume" when the session goes
// on from a saved transcript (Options.Resume, or Continue that found
// one), "fork" when it was forked from one (ForkSession), else "startup".
// (A /clear fires SessionStart with "clear" itself: see cleared.)
func (s *Session) startSource() string {
	if s.origin != "" {
		return s.origin
	}
	return "startup"
}

// MarkStarted records that the session's SessionStart hooks ran (in
// another process that held the session before): the first prompt does
// not run them again. Call it before the prompt's hooks.
func (s *Session) MarkStarted() { s.started = true }

// MarkResumed makes the SessionStart source of the first prompt "resume":
// the session goes on from a conversation that another process saved.
func (s *Session) MarkResumed() {
	if s.origin == "" {
		s.origin = "resume"
	}
}

// endSession runs the SessionEnd hooks once, with s.endReason as the
// reason: "prompt_input_exit" when a Client is closed (the host ended the
// conversation's input, as closing the SDK's stdin does), "other" for the
// end of a one-shot Query, which is how the reference's print mode ends.
func (s *Session) endSession() {
	if s.hooks == nil || s.ended {
		return
	}
	s.ended = true
	reason := s.endReason
	if reason == "" {
		reason = "other"
	}
	s.hooks.SessionEnd(context.Background(), hooks.SessionEndInput{Base: s.hookBase(), Reason: reason})
}
