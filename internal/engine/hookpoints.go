package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// HookPoints are the places where a host observes and steers the loop
// besides authorisation (which is Config.Authorize). Any field may be nil.
// They run on the loop's goroutine.
type HookPoints struct {
	// PromptSubmit sees each prompt before it is sent, before it is
	// taken for a built-in command ("/compact", "/clear"). It may add
	// text for the model next to the prompt, replace the prompt's text
	// (a slash command's expansion), block the prompt (it is dropped and
	// the run ends, showing reason), or halt.
	PromptSubmit func(ctx context.Context, prompt string) PromptVerdict
	// AfterTool sees each executed call's output and may change it, add
	// context for the model, or halt the run after this reply's tools.
	AfterTool func(ctx context.Context, call *ToolCall, out *ToolOutput) *Halt
	// BeforeStop runs when the model is done (no tool calls). Continuing
	// gives the model Text as a new user turn. active reports whether the
	// previous stop was already continued by this hook point.
	BeforeStop func(ctx context.Context, active bool) StopVerdict
}

// PromptVerdict is what PromptSubmit decided.
type PromptVerdict struct {
	Context []string // added for the model next to the prompt
	// Replace, when set, is the text sent in place of the prompt's text
	// blocks; its image and document blocks follow it.
	Replace *string
	// Preamble, when set with Replace, is a text block sent before it
	// (a slash command's <command-name> header).
	Preamble string
	Blocked  bool
	// BlockedBy names the hook event that blocked the prompt ("" for
	// UserPromptSubmit).
	BlockedBy string
	Reason    string
	Halt      *Halt
}

// StopVerdict is what BeforeStop decided.
type StopVerdict struct {
	Continue bool
	Text     string // the new user turn when Continue
	Halt     *Halt
}

// Halt ends the run at the next step, as a hook's continue:false does.
type Halt struct {
	Reason string
	// interrupt marks a halt caused by a denial with interrupt set.
	interrupt bool
}

// ToolOutput is an executed call's output, as AfterTool may change it.
type ToolOutput struct {
	Result     model.Content // the tool_result block
	Structured any           // tool_use_result
	Failed     bool
	// Context is text for the model, sent after the tool results.
	Context []string
}

// MaxStopContinuations bounds how many times in a row BeforeStop may keep
// the model going.
const MaxStopContinuations = 8

// submitPrompt runs the PromptSubmit hook point; it returns the prompt to
// send and the context hooks added for the model, or a result when the run
// must end.
func (r *run) submitPrompt(prompt []model.Content) ([]model.Content, []model.Content, *message.Result) {
	typed := prompt
	prompt, context, v := r.promptVerdict(prompt)
	switch {
	case v.Halt != nil:
		return nil, nil, r.haltResult(v.Halt)
	case v.Blocked:
		return nil, nil, r.blockedPrompt(typed, v)
	}
	return prompt, context, nil
}

// blockedPrompt is the result of a run whose prompt (typed) a hook
// blocked. As the reference ends such a run (testdata/conformance/
// t_hook_userprompt_block): a success result, no turn taken, whose text
// names the hook point, gives the reason and the prompt.
//
// It and applyPromptVerdict are functions of their own, not inlined,
// because the hook points run at the deepest point of a turn's stack before
// its first request (see streamOnce): what a hook point's caller keeps in
// its frame adds to the stack every session's goroutine grows to.
//
//go:noinline
func (r *run) blockedPrompt(typed []model.Content, v *PromptVerdict) *message.Result {
	event := v.BlockedBy
	if event == "" {
		event = "UserPromptSubmit"
	}
	var texts []string
	for _, b := range typed {
		if b.Type == model.TypeText {
			texts = append(texts, b.Text)
		}
	}
	res := r.base(message.ResultSuccess, false)
	text := fmt.Sprintf("%s operation blocked by hook:\n%s\n\nOriginal prompt: %s", event, v.Reason, strings.Join(texts, "\n"))
	res.Result = &text
	res.NumTurns = 0
	res.TerminalReason = message.TerminalHookStopped
	res.StopReason = nil
	return res
}

// promptVerdict runs the PromptSubmit hook point on prompt's text and
// applies its verdict: the prompt to send, the context for the model, and
// the verdict (nil when no hook point is set).
func (r *run) promptVerdict(prompt []model.Content) ([]model.Content, []model.Content, *PromptVerdict) {
	hp := r.s.cfg.Hooks.PromptSubmit
	if hp == nil {
		return prompt, nil, &PromptVerdict{}
	}
	v := hp(r.ctx, promptText(prompt))
	return applyPromptVerdict(prompt, v)
}

// applyPromptVerdict applies v, the PromptSubmit hook point's verdict on
// prompt; see promptVerdict.
//
//go:noinline
func applyPromptVerdict(prompt []model.Content, v PromptVerdict) ([]model.Content, []model.Content, *PromptVerdict) {
	if v.Halt != nil || v.Blocked {
		return nil, nil, &v
	}
	if v.Replace != nil { // the text is replaced; images and documents stay
		var kept []model.Content
		if v.Preamble != "" {
			kept = append(kept, model.TextBlock(v.Preamble))
		}
		kept = append(kept, model.TextBlock(*v.Replace))
		for _, b := range prompt {
			if b.Type != model.TypeText {
				kept = append(kept, b)
			}
		}
		prompt = kept
	}
	var context []model.Content
	for _, c := range v.Context {
		context = append(context, model.TextBlock(reminder(c)))
	}
	return prompt, context, &v
}

// haltResult ends a run stopped by a hook.
func (r *run) haltResult(h *Halt) *message.Result {
	res := r.successResult()
	res.TerminalReason = message.TerminalHookStopped
	if h.interrupt {
		res = r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{h.Reason}
		res.TerminalReason = message.TerminalAbortedTools
		return res
	}
	if h.Reason != "" {
		text := h.Reason
		res.Result = &text
	}
	return res
}

// reminder wraps context added by a hook, so the model can tell it from
// what the user wrote.
func reminder(s string) string {
	return "<system-reminder>\n" + s + "\n</system-reminder>"
}

// beforeStop runs the BeforeStop hook point when the model is done. It
// reports whether the loop continues with a new turn, or a result when a
// hook halted the run.
func (r *run) beforeStop() (bool, *message.Result) {
	hp := r.s.cfg.Hooks.BeforeStop
	if hp == nil {
		return false, nil
	}
	v := hp(r.ctx, r.stopHooks > 0)
	if r.ctx.Err() != nil {
		return false, nil // interrupted while the hooks ran: afterFinalReply ends the run so
	}
	if v.Halt != nil {
		return false, r.haltResult(v.Halt)
	}
	if !v.Continue || r.stopHooks >= MaxStopContinuations {
		return false, nil
	}
	r.stopHooks++
	return r.syntheticTurn(v.Text), nil
}
