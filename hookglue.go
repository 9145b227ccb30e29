package agentloop

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
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
		AfterTool: func(ctx context.Context, call *engine.ToolCall, out *engine.ToolOutput) *engine.Halt {
			if out.Failed {
				r := d.PostToolUseFailure(ctx, hooks.PostToolUseFailureInput{Base: s.hookBase(), ToolName: call.Name,
					ToolInput: call.Input, ToolUseID: call.ID, Error: out.Result.ResultText()})
				out.Context = append(out.Context, r.AdditionalContext...)
				return halt(r.Common)
			}
			resp, _ := json.Marshal(out.Structured)
			if out.Structured == nil {
				resp, _ = json.Marshal(out.Result.ResultText())
			}
			r := d.PostToolUse(ctx, hooks.PostToolUseInput{Base: s.hookBase(), ToolName: call.Name,
				ToolInput: call.Input, ToolResponse: resp, ToolUseID: call.ID})
			if r.UpdatedToolOutput != nil {
				replaceOutput(out, r.UpdatedToolOutput)
			}
			if r.Blocked {
				out.Context = append(out.Context, "PostToolUse:"+call.Name+" hook error: "+r.Reason)
			}
			out.Context = append(out.Context, r.AdditionalContext...)
			return halt(r.Common)
		},
		BeforeStop: func(ctx context.Context, active bool) engine.StopVerdict {
			r := d.Stop(ctx, hooks.StopInput{Base: s.hookBase(), StopHookActive: active})
			switch {
			case r.Halt:
				return engine.StopVerdict{Halt: &engine.Halt{Reason: r.StopReason}}
			case r.Blocked:
				return engine.StopVerdict{Continue: true, Text: "Stop hook feedback:\n" + r.Reason}
			case len(r.AdditionalContext) > 0:
				return engine.StopVerdict{Continue: true, Text: strings.Join(r.AdditionalContext, "\n")}
			}
			return engine.StopVerdict{}
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
