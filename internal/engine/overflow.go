package engine

import (
	"errors"
	"strings"

	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/model"
)

// overflowGap is how many replies must come between two compactions made
// because the API refused a request as too long.
const overflowGap = 3

// recoverOverflow handles an API refusal of a request as too long for the
// context window, which the threshold check let through because its
// estimate (a quarter of the bytes) was short: dense text, images,
// documents. With automatic compaction on, the history is compacted
// (trigger auto) and retry is set: the request goes again, smaller. This
// is tried once per request; a second refusal, compaction turned off, a
// PreCompact hook's block, or a refusal within overflowGap replies of the
// last such compaction (the conversation overflows again at once: a tool
// output too large for the window, say, which compaction would only make
// the model fetch again) leaves the API's error to end the run, as the
// reference surfaces it; so does a refusal of a history that is only the
// prompt, which no summary would shorten. done is set, with the ending, when the
// compaction itself ended the run (its summary request failed, the
// consumer stopped).
func (r *run) recoverOverflow(err error) (e ending, done, retry bool) {
	c := r.s.cfg.Compaction
	if c == nil || c.Disabled || r.overflowRetried || !ContextOverflow(err) || len(r.s.history) < 2 ||
		r.overflows > 0 && r.sinceOverflow < overflowGap {
		return ending{}, false, false
	}
	r.overflowRetried = true
	r.overflows++
	r.sinceOverflow = 0
	skipped := r.compactSkipped
	r.compactSkipped = false
	if e, done := r.compactNow(compact.TriggerAuto, nil); done {
		return e, true, false
	}
	if r.compactSkipped { // blocked by PreCompact: the error stands
		return ending{}, false, false
	}
	r.compactSkipped = skipped
	return ending{}, false, true
}

// ContextOverflow reports whether err is the API's refusal of a request
// as too large for the model's context window: a 400
// invalid_request_error saying the prompt is too long (or that input and
// max_tokens exceed the context limit), or a 413 request_too_large.
func ContextOverflow(err error) bool {
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	if apiErr.Status == 413 || apiErr.Type == "request_too_large" {
		return true
	}
	if apiErr.Status != 400 && apiErr.Type != "invalid_request_error" {
		return false
	}
	msg := strings.ToLower(apiErr.Message)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}
