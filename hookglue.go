package agentloop

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/uuid"
)

// newDispatcher builds the session's hook dispatcher from the Go callbacks
// of Options.Hooks and the command hooks of the loaded settings.
func (s *session) newDispatcher(commands map[string][]settings.HookMatcher) (*hooks.Dispatcher, error) {
	cfg := hooks.Config{
		Callbacks: s.opts.Hooks,
		Commands:  commands,
		Cwd:       s.env.Cwd,
		SessionID: s.env.SessionID,
		Env:       s.env.Environ,
	}
	if s.opts.IncludeHookEvents {
		cfg.Observer = func(n hooks.Notice) {
			if s.eng != nil {
				s.eng.Notify(&message.System{Subtype: n.Subtype, SessionID: s.env.SessionID,
					UUID: uuid.NewString(), Data: n.Fields()})
			}
		}
	}
	return hooks.New(cfg)
}

// base is the common part of every hook input.
func (s *session) hookBase() hooks.Base {
	return hooks.Base{PermissionMode: string(s.currentMode())}
}

// hookPoints connects the engine's hook points to the dispatcher.
func (s *session) hookPoints() engine.HookPoints {
	d := s.hooks
	return engine.HookPoints{
		PromptSubmit: func(ctx context.Context, prompt string) engine.PromptVerdict {
			var v engine.PromptVerdict
			if !s.started {
				s.started = true
				st := d.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: "startup", Model: s.eng.Model()})
				v.Context = append(v.Context, st.AdditionalContext...)
				if st.Halt {
					v.Halt = &engine.Halt{Reason: st.StopReason}
					return v
				}
			}
			r := d.UserPromptSubmit(ctx, hooks.UserPromptSubmitInput{Base: s.hookBase(), Prompt: prompt, Source: "sdk"})
			v.Context = append(v.Context, r.AdditionalContext...)
			v.Blocked, v.Reason = r.Blocked, r.Reason
			if r.Halt {
				v.Halt = &engine.Halt{Reason: r.StopReason}
			}
			return v
		},
		AfterTool: s.afterTool(lineage.Agent{}),
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
func (s *session) hookBaseFor(a lineage.Agent) hooks.Base {
	b := s.hookBase()
	b.AgentID, b.AgentType = a.ID, a.Type
	return b
}

// afterTool is the AfterTool hook point of the loop a: PostToolUse, or
// PostToolUseFailure for a failed call, with a's identity.
func (s *session) afterTool(a lineage.Agent) func(ctx context.Context, call *engine.ToolCall, out *engine.ToolOutput) *engine.Halt {
	d := s.hooks
	return func(ctx context.Context, call *engine.ToolCall, out *engine.ToolOutput) *engine.Halt {
		if out.Failed {
			r := d.PostToolUseFailure(ctx, hooks.PostToolUseFailureInput{Base: s.hookBaseFor(a), ToolName: call.Name,
				ToolInput: call.Input, ToolUseID: call.ID, Error: out.Result.ResultText()})
			out.Context = append(out.Context, r.AdditionalContext...)
			return halt(r.Common)
		}
		resp, _ := json.Marshal(out.Structured)
		if out.Structured == nil {
			resp, _ = json.Marshal(out.Result.ResultText())
		}
		r := d.PostToolUse(ctx, hooks.PostToolUseInput{Base: s.hookBaseFor(a), ToolName: call.Name,
			ToolInput: call.Input, ToolResponse: resp, ToolUseID: call.ID})
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
func (s *session) subagentHooks(a lineage.Agent, last func() string, stopped *bool) engine.HookPoints {
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

// endSession runs the SessionEnd hooks once.
func (s *session) endSession() {
	if s.hooks == nil || s.ended {
		return
	}
	s.ended = true
	s.hooks.SessionEnd(context.Background(), hooks.SessionEndInput{Base: s.hookBase(), Reason: "other"})
}
