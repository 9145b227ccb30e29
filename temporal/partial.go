package temporal

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// SignalPartial carries a model call's stream events from the CallModel
// activity to its workflow while the reply streams, so a client sees the
// tokens as they come (Options.IncludePartialMessages). The activity sends
// what it has every PartialFlush, and the rest before it returns: every
// event of a reply is in the workflow before the reply.
const SignalPartial = "agentloop.partial"

// PartialFlush is how often a streaming model call sends its events.
var PartialFlush = 100 * time.Millisecond

// PartialEvent is one stream event of a reply.
type PartialEvent struct {
	Data      json.RawMessage `json:"data"`
	MessageID string          `json:"messageId,omitempty"`
	TTFTMs    *int64          `json:"ttftMs,omitempty"`
}

// partialSink is the model.Handler of a streaming CallModel activity.
type partialSink struct {
	ctx   context.Context
	c     client.Client
	wid   string
	runID string
	mu    sync.Mutex
	batch []PartialEvent
	msgID string
	last  time.Time
	sent  int // events signalled
}

func newPartialSink(ctx context.Context, c client.Client) *partialSink {
	info := activity.GetInfo(ctx)
	return &partialSink{ctx: ctx, c: c, wid: info.WorkflowExecution.ID, runID: info.WorkflowExecution.RunID, last: time.Now()}
}

func (p *partialSink) Event(ev model.StreamEvent) {
	p.mu.Lock()
	if ev.Type == "message_start" {
		var ms struct {
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &ms)
		p.msgID = ms.Message.ID
	}
	e := PartialEvent{Data: append(json.RawMessage(nil), ev.Data...), MessageID: p.msgID}
	if ev.Type == "message_start" {
		ms := ev.TTFT.Milliseconds()
		e.TTFTMs = &ms
	}
	p.batch = append(p.batch, e)
	due := time.Since(p.last) >= PartialFlush
	p.mu.Unlock()
	if due {
		p.flush()
	}
}

func (p *partialSink) Block(int, model.Content, *model.Response) {}
func (p *partialSink) Retry(model.RetryInfo)                     {}

// flush signals the events gathered so far. A failed signal loses only
// those stream events: the reply itself comes back with the activity.
func (p *partialSink) flush() {
	p.mu.Lock()
	batch := p.batch
	p.batch, p.last = nil, time.Now()
	p.mu.Unlock()
	if len(batch) > 0 {
		if p.c.SignalWorkflow(p.ctx, p.wid, p.runID, SignalPartial, batch) == nil {
			p.mu.Lock()
			p.sent += len(batch)
			p.mu.Unlock()
		}
	}
}

// close sends what is left and returns how many events were signalled.
func (p *partialSink) close() int {
	p.flush()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

// receivePartials appends the stream events the model calls signal to the
// session's stream, in the order they arrive, for as long as the workflow
// runs.
func (w *wf) receivePartials() {
	w.partials = workflow.GetSignalChannel(w.root, SignalPartial)
	workflow.Go(w.root, func(ctx workflow.Context) {
		for {
			var batch []PartialEvent
			if !w.partials.Receive(ctx, &batch) {
				return
			}
			w.emitPartials(batch)
		}
	})
}

// awaitPartials waits until the stream holds the n events a model call
// signalled: those signalled just before it returned arrive in the same
// workflow task as its reply, and must reach the stream before it.
func (w *wf) awaitPartials(n int) {
	if n <= w.partialSeen {
		return
	}
	_ = workflow.Await(w.cur, func() bool { return w.partialSeen >= n })
}

func (w *wf) emitPartials(batch []PartialEvent) {
	w.partialSeen += len(batch)
	for _, e := range batch {
		w.emit(&message.StreamEvent{Event: e.Data, SessionID: w.in.SessionID, UUID: w.newID(),
			APIMessageID: e.MessageID, TTFTMs: e.TTFTMs})
	}
}
