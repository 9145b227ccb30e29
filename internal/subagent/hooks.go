package subagent

import (
	"context"
	"strings"

	"github.com/agentloop/agentloop/internal/engine"
)

// Hooks wraps hp, the hook points of the loop owner ("" for the main loop),
// so that the loop hears of the background subagents it started:
//
//   - A notice that is ready when one of the loop's tool calls finishes goes
//     to the model with that reply's tool results (as context), so it
//     arrives with the next request.
//   - When the model is done (no tool calls) while subagents of the loop
//     still run, the loop waits (bounded by its context) for the next to
//     end and gives the model a new turn with the notice(s), before the
//     loop's own stop hooks run. The engine bounds such turns in a row
//     (engine.MaxStopContinuations); notices past that bound reach the
//     stream but not the model.
//   - For the main loop, each run's start is recorded (see SetRun), so the
//     end of the run stops what it started; notices of subagents that the
//     end of the previous run stopped go to the model with the next prompt.
func (r *Registry) Hooks(owner string, hp engine.HookPoints) engine.HookPoints {
	return HooksOf(func() *Registry { return r }, owner, hp)
}

// HooksOf is Registry.Hooks for the registry reg returns when a hook
// fires: a session's main loop passes a function that makes its registry
// on first use (For), so that a session that never runs keeps none.
func HooksOf(reg func() *Registry, owner string, hp engine.HookPoints) engine.HookPoints {
	out := hp
	if owner == "" {
		prev := hp.PromptSubmit
		out.PromptSubmit = func(ctx context.Context, prompt string) engine.PromptVerdict {
			r := reg()
			r.SetRun(ctx)
			var v engine.PromptVerdict
			if prev != nil {
				v = prev(ctx, prompt)
			}
			v.Context = append(v.Context, r.Take(owner)...)
			return v
		}
	}
	after := hp.AfterTool
	out.AfterTool = func(ctx context.Context, call *engine.ToolCall, o *engine.ToolOutput) *engine.Halt {
		var h *engine.Halt
		if after != nil {
			h = after(ctx, call, o)
		}
		o.Context = append(o.Context, reg().Take(owner)...)
		return h
	}
	stop := hp.BeforeStop
	out.BeforeStop = func(ctx context.Context, active bool) engine.StopVerdict {
		r := reg()
		r.Wait(ctx, owner)
		// A run that was cancelled while it waited takes no notice: it
		// would never reach the model, and left in place it goes with the
		// next prompt (PromptSubmit).
		if ctx.Err() != nil {
			if stop == nil {
				return engine.StopVerdict{}
			}
			return stop(ctx, active)
		}
		if notes := r.Take(owner); len(notes) > 0 {
			return engine.StopVerdict{Continue: true, Text: strings.Join(notes, "\n\n")}
		}
		if stop == nil {
			return engine.StopVerdict{}
		}
		return stop(ctx, active)
	}
	return out
}
