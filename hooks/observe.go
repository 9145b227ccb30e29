package hooks

import (
	"context"
	"errors"

	"github.com/agentloop/agentloop/observe"
)

// hookSpan is the span of one dispatch of an event (Config.Spans); a nil
// *hookSpan, the case without Config.Spans, does nothing.
type hookSpan struct {
	span    observe.Span
	outcome Outcome
}

// observe opens the span of a dispatch of ev running n hooks, named name
// ("PreToolUse:Bash"), and returns the context the hooks run under.
func (d *Dispatcher) observe(ctx context.Context, ev Event, name string, n int) (context.Context, *hookSpan) {
	if d.cfg.Spans == nil {
		return ctx, nil
	}
	ctx, sp := d.cfg.Spans.Start(ctx, observe.Start{Kind: observe.KindHook, Name: "agentloop.hook " + string(ev),
		Attrs: []observe.Attr{
			observe.String(observe.AttrHookEvent, string(ev)),
			observe.String(observe.AttrHookName, name),
			observe.Int(observe.AttrHookCount, int64(n)),
		}})
	return ctx, &hookSpan{span: sp, outcome: Success}
}

// add notes the outcome of one finished hook and returns its notice.
func (h *hookSpan) add(n Notice) Notice {
	if h != nil && h.outcome == Success && n.Outcome != "" && n.Outcome != Success {
		h.outcome = n.Outcome
	}
	return n
}

// end closes the span with the dispatch's outcome: success when every hook
// succeeded, else the first other outcome.
func (h *hookSpan) end() {
	if h == nil {
		return
	}
	h.span.SetAttrs(observe.String(observe.AttrHookOutcome, string(h.outcome)))
	var err error
	if h.outcome != Success {
		err = errors.New("a hook ended with outcome " + string(h.outcome))
	}
	h.span.End(err)
}
