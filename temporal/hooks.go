package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/internal/engine"
	"go.temporal.io/sdk/workflow"
)

// The loop's hook points (SessionStart with the first prompt,
// UserPromptSubmit, PostToolUse and its failure event, Stop, PreCompact,
// PostCompact and SessionStart after a compaction), as activities: the
// worker's hooks run where the session's settings and callbacks are, and
// their verdict is in the history. They are used only when the worker may
// have hooks (Description.Hooks). SessionEnd runs when the workflow ends
// (CloseSession), not when a worker lets the session go.

// Hook kinds of the Hook activity.
const (
	hookPrompt      = "prompt"
	hookAfterTool   = "afterTool"
	hookStop        = "stop"
	hookPreCompact  = "preCompact"
	hookPostCompact = "postCompact"
	hookCompacted   = "compacted"
)

// HookCall is the input of the Hook activity.
type HookCall struct {
	Session SessionInput       `json:"session"`
	Kind    string             `json:"kind"`
	Prompt  string             `json:"prompt,omitempty"`
	Call    *AuthorizeCall     `json:"call,omitempty"` // the tool call, for afterTool (Session unset)
	Output  *engine.ToolOutput `json:"output,omitempty"`
	Active  bool               `json:"active,omitempty"`
	// Started says SessionStart ran for the session already (on whichever
	// worker): the prompt hook does not run it again.
	Started bool `json:"started,omitempty"`
	// Resumed says the session goes on from an ended workflow's
	// conversation: its SessionStart's source is "resume".
	Resumed bool `json:"resumed,omitempty"`
	// Trigger, Custom and Summary are a compaction's ("auto" or "manual",
	// the /compact instructions, the summary).
	Trigger string  `json:"trigger,omitempty"`
	Custom  *string `json:"custom,omitempty"`
	Summary string  `json:"summary,omitempty"`
}

// HookResult is the Hook activity's result, by kind.
type HookResult struct {
	Prompt *engine.PromptVerdict `json:"prompt,omitempty"`
	Output *engine.ToolOutput    `json:"output,omitempty"`
	Halt   *engine.Halt          `json:"halt,omitempty"`
	Stop   *engine.StopVerdict   `json:"stop,omitempty"`
	// Blocked and Reason are PreCompact's verdict; Context is what
	// SessionStart after a compaction adds.
	Blocked bool     `json:"blocked,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Context []string `json:"context,omitempty"`
}

// hook runs one Hook activity; a failure is a halt naming it.
func (w *wf) hook(in HookCall) (HookResult, *engine.Halt) {
	in.Session = w.session()
	ctx := workflow.WithActivityOptions(w.cur, hookOptions)
	var out HookResult
	if err := workflow.ExecuteActivity(ctx, actHook, in).Get(ctx, &out); err != nil {
		return out, &engine.Halt{Reason: "The " + in.Kind + " hooks could not run: " + err.Error()}
	}
	return out, nil
}

func (w *wf) hookPoints() engine.HookPoints {
	return engine.HookPoints{
		PromptSubmit: func(_ context.Context, prompt string) engine.PromptVerdict {
			out, halt := w.hook(HookCall{Kind: hookPrompt, Prompt: prompt, Started: w.started, Resumed: w.resumed})
			if halt != nil || out.Prompt == nil {
				return engine.PromptVerdict{Halt: halt}
			}
			w.started = true
			return *out.Prompt
		},
		AfterTool: func(_ context.Context, call *engine.ToolCall, o *engine.ToolOutput) *engine.Halt {
			out, halt := w.hook(HookCall{Kind: hookAfterTool, Output: o,
				Call: &AuthorizeCall{ID: call.ID, Name: call.Name, Input: call.Input}})
			if halt != nil {
				return halt
			}
			if out.Output != nil {
				*o = *out.Output
			}
			return out.Halt
		},
		BeforeStop: func(_ context.Context, active bool) engine.StopVerdict {
			out, halt := w.hook(HookCall{Kind: hookStop, Active: active})
			if halt != nil || out.Stop == nil {
				return engine.StopVerdict{Halt: halt}
			}
			return *out.Stop
		},
	}
}

// compactionHooks puts the compaction hook points of the worker's
// session into the loop's compaction.
func (w *wf) compactionHooks(c *engine.Compaction) {
	c.PreCompact = func(_ context.Context, trigger string, custom *string) (bool, string) {
		out, halt := w.hook(HookCall{Kind: hookPreCompact, Trigger: trigger, Custom: custom})
		if halt != nil {
			return true, halt.Reason
		}
		return out.Blocked, out.Reason
	}
	c.PostCompact = func(_ context.Context, trigger, summary string) {
		_, _ = w.hook(HookCall{Kind: hookPostCompact, Trigger: trigger, Summary: summary})
	}
	c.Compacted = func(_ context.Context, trigger string) []string {
		out, _ := w.hook(HookCall{Kind: hookCompacted, Trigger: trigger})
		return out.Context
	}
}

// Hook runs one of the session's hook points on this worker.
func (a *Activities) Hook(ctx context.Context, in HookCall) (*HookResult, error) {
	s, err := a.session(ctx, in.Session)
	if err != nil {
		return nil, err
	}
	hp := s.EngineConfig().Hooks
	out := &HookResult{}
	if in.Started {
		s.MarkStarted() // by this worker or another
	}
	if in.Resumed {
		s.MarkResumed()
	}
	switch in.Kind {
	case hookPrompt:
		if hp.PromptSubmit != nil {
			v := hp.PromptSubmit(ctx, in.Prompt)
			out.Prompt = &v
		}
	case hookAfterTool:
		if in.Call == nil || in.Output == nil {
			return nil, errors.New("agentloop/temporal: afterTool hook without its call")
		}
		o := *in.Output
		if hp.AfterTool != nil {
			call := &engine.ToolCall{ID: in.Call.ID, Name: in.Call.Name, Input: in.Call.Input}
			for _, t := range s.EngineConfig().Tools {
				if t.Info().Name == in.Call.Name {
					call.Tool = t
				}
			}
			out.Halt = hp.AfterTool(ctx, call, &o)
		}
		if o.Structured != nil {
			// It goes back through JSON either way; make that explicit.
			b, err := json.Marshal(o.Structured)
			if err != nil {
				return nil, fmt.Errorf("agentloop/temporal: encoding the tool's structured output: %w", err)
			}
			o.Structured = json.RawMessage(b)
		}
		out.Output = &o
	case hookStop:
		if hp.BeforeStop != nil {
			v := hp.BeforeStop(ctx, in.Active)
			out.Stop = &v
		}
	case hookPreCompact, hookPostCompact, hookCompacted:
		cp := s.EngineConfig().Compaction
		switch {
		case cp == nil:
		case in.Kind == hookPreCompact && cp.PreCompact != nil:
			out.Blocked, out.Reason = cp.PreCompact(ctx, in.Trigger, in.Custom)
		case in.Kind == hookPostCompact && cp.PostCompact != nil:
			cp.PostCompact(ctx, in.Trigger, in.Summary)
		case in.Kind == hookCompacted && cp.Compacted != nil:
			out.Context = cp.Compacted(ctx, in.Trigger)
		}
	default:
		return nil, fmt.Errorf("agentloop/temporal: no hook kind %q", in.Kind)
	}
	return out, nil
}
