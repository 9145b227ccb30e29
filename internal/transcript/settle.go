package transcript

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/session"
)

// Settle waits, at most CloseTimeout and while ctx lasts, until the store has every entry
// recorded so far (the result's included), and returns the
// system/mirror_error messages of the batches that failed meanwhile,
// for the caller to put into the stream before the result. This is the
// reference's "flush before each result": a result is not shown while
// its session's store copy is still on the way, and a failure after the
// run's last message still reaches the stream.
//
// When the wait times out, the entries still on the way are reported as
// one more mirror_error (they may yet be stored; the store is behind for
// now), and neither Close nor later Settles wait for the store again until
// it has caught up. Without a store, Settle returns nil at once.
func (r *Recorder) Settle(ctx context.Context) []message.Message {
	if r == nil || r.m == nil {
		return nil
	}
	r.mu.Lock()
	if r.stuck && r.m.Pending() == 0 {
		r.stuck = false // the store caught up
	}
	if r.closed || r.stuck {
		r.mu.Unlock()
		return nil
	}
	r.holding = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CloseTimeout)
	err := r.m.Flush(ctx)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holding = false
	out := r.held
	r.held = nil
	if err != nil {
		r.stuck = true
		e := &session.MirrorError{Key: r.cfg.Key, Err: fmt.Errorf("%d entries still not stored after waiting %s for the store: %w",
			r.m.Pending(), r.cfg.CloseTimeout, err)}
		out = append(out, MirrorErrorMessage(r.sessionID, e))
	}
	return out
}

// AfterPrompt is Settle after a prompt: when the last Record wrote a
// prompt, it waits (as Settle does, bounded) until the store has it, so
// that a prompt is in the store before the model is asked and a host that
// dies during the turn leaves it in the history for the host that takes
// the session over. Otherwise, or without a store, it returns nil at once.
// It must not be called with the Recorder's lock held.
func (r *Recorder) AfterPrompt(ctx context.Context) []message.Message {
	if r == nil || r.m == nil {
		return nil
	}
	r.mu.Lock()
	p := r.promptWritten
	r.promptWritten = false
	r.mu.Unlock()
	if !p {
		return nil
	}
	return r.Settle(ctx)
}

// MaxLastPrompt bounds the text a last-prompt entry keeps of its prompt:
// the prompt itself is on its user line, and the last-prompt entry only
// serves session listings, which show 200 characters. Without the bound a
// 40 MB prompt made an 80 MB transcript.
const MaxLastPrompt = 4096

// BoundPrompt returns text cut to at most MaxLastPrompt bytes, on a rune
// boundary, with "…" appended when it was cut.
func BoundPrompt(text string) string {
	if len(text) <= MaxLastPrompt {
		return text
	}
	cut := MaxLastPrompt - len("…")
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}

// closeWait is how long Close waits for the store: CloseTimeout, or not at
// all after a Settle timed out (the store is not answering; the copies
// left are reported at once).
func (r *Recorder) closeWait() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stuck {
		return 0
	}
	return r.cfg.CloseTimeout
}
