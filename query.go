package agentloop

import (
	"context"
	"errors"
	"iter"

	"github.com/agentloop/agentloop/internal/conversation"
)

// Stream is the message stream of one run. Range over it to drive the run;
// it runs once, the first time it is ranged over (or Result or Collect is
// called), and breaking out of the range cancels it. Ranging over it again
// yields only ErrStreamUsed.
type Stream iter.Seq2[Message, error]

// Query runs prompt through the agent loop with opts (nil means defaults)
// and returns the stream of its messages. Nothing happens until the stream
// is consumed. ctx bounds the whole run.
//
// When the run ends in an error result, the stream yields that result and
// then a *ResultError wrapping it.
func Query(ctx context.Context, prompt string, opts *Options) Stream {
	return Stream(conversation.Query(ctx, prompt, opts.config()))
}

// Result consumes the stream and returns its result message. The error is
// non-nil when the run did not end in a successful result; a run that ended
// in an error result returns both the result and a *ResultError.
func (s Stream) Result() (*ResultMessage, error) {
	var res *ResultMessage
	for m, err := range s {
		if err != nil {
			return res, err
		}
		if r, ok := m.(*ResultMessage); ok {
			res = r
		}
	}
	if res == nil {
		return nil, errors.New("agentloop: stream ended without a result")
	}
	return res, nil
}

// Collect consumes the stream and returns every message, stopping at the
// first error.
func (s Stream) Collect() ([]Message, error) {
	var out []Message
	for m, err := range s {
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
