package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// PromptFunc asks a model one question: system and user are the texts of
// a one-turn request to model (an id or alias), and the answer's text is
// returned. It must honour ctx.
type PromptFunc func(ctx context.Context, model, system, user string) (string, error)

// DefaultPromptModel is the model a prompt hook asks when it names none.
const DefaultPromptModel = "haiku"

// PromptTimeout is the default timeout of a prompt hook (bounded by the
// event's own default, for SessionEnd).
const PromptTimeout = 30 * time.Second

// ArgumentsPlaceholder in a prompt hook's prompt is replaced by the hook
// input as JSON; a prompt without it gets the input appended.
const ArgumentsPlaceholder = "$ARGUMENTS"

// promptSystem tells the model of a prompt hook how to answer.
const promptSystem = `You are a check that runs inside a coding agent at one of its hook points. You get a question about the event and the event's data as JSON. Judge only what the question asks.

Answer with a single JSON object and nothing else:
{"ok": true} when the event may go on, or
{"ok": false, "reason": "<why not, in a sentence the agent or its user can act on>"} when it must not.`

// runPrompt asks the model of a prompt hook. Its answer must be a JSON
// object {"ok": true} or {"ok": false, "reason": "…"} (surrounding text or
// a code fence is tolerated). ok:false is a block, as exit code 2 is for a
// command hook, with reason as its message; an answer without a boolean
// "ok", a failed model call or a panic of Config.Prompt is a non-blocking
// hook error.
func (d *Dispatcher) runPrompt(ctx context.Context, r *run, input []byte) Notice {
	hctx, cancel := r.context(ctx)
	defer cancel()
	m := r.h.entry.Model
	if m == "" {
		m = DefaultPromptModel
	}
	user := r.h.entry.Prompt
	if strings.Contains(user, ArgumentsPlaceholder) {
		user = strings.ReplaceAll(user, ArgumentsPlaceholder, string(input))
	} else {
		user += "\n\n" + string(input)
	}
	type reply struct {
		text string
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- reply{err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
			}
		}()
		text, err := d.cfg.Prompt(hctx, m, promptSystem, user)
		ch <- reply{text, err}
	}()
	var rep reply
	select {
	case rep = <-ch:
	case <-hctx.Done():
		r.ended(ctx, hctx)
		return Notice{Stderr: r.lateText(), ExitCode: 1, Outcome: Cancelled}
	}
	if rep.err != nil {
		if r.ended(ctx, hctx) {
			return Notice{Stderr: r.lateText(), ExitCode: 1, Outcome: Cancelled}
		}
		r.failure = fmt.Sprintf("%s: asking %s: %v", r.label(), m, rep.err)
		return Notice{Stderr: rep.err.Error(), ExitCode: 1, Outcome: Failed}
	}
	n := Notice{Output: rep.text, Stdout: rep.text}
	ok, reason, err := parsePromptVerdict(rep.text)
	switch {
	case err != nil:
		r.failure = fmt.Sprintf("%s: the model's answer is not a verdict (%v): %q", r.label(), err, clip(strings.TrimSpace(rep.text), 200))
		n.ExitCode, n.Outcome = 1, Failed
	case ok:
		n.Outcome = Success
	default:
		if strings.TrimSpace(reason) == "" {
			reason = "the model gave no reason"
		}
		r.blocked, r.stderr = true, reason
		n.Stderr, n.ExitCode, n.Outcome = reason, 2, Failed
	}
	return n
}

// parsePromptVerdict reads {"ok": bool, "reason"?: string} from a model's
// answer, from its first "{" to its last "}".
func parsePromptVerdict(text string) (ok bool, reason string, err error) {
	i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if i < 0 || j < i {
		return false, "", errors.New("no JSON object")
	}
	var v struct {
		OK     *bool  `json:"ok"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text[i:j+1]), &v); err != nil {
		return false, "", err
	}
	if v.OK == nil {
		return false, "", errors.New(`no boolean "ok"`)
	}
	return *v.OK, v.Reason, nil
}
