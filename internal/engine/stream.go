package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// callModel sends the next request and streams the reply, trying the
// fallback models in order when the main model stays overloaded. The main
// model is tried first on every call. It returns the reply and the
// assistant messages the stream showed for it, one per non-empty block.
func (r *run) callModel() (*model.Response, []*message.Assistant, error) {
	models, _, _ := r.s.settings()
	var err error
	for _, m := range models {
		var resp *model.Response
		resp, err = r.streamOnce(m)
		if err == nil || r.stopped {
			return resp, r.shown, err
		}
		var apiErr *model.APIError
		if r.ctx.Err() != nil {
			return nil, r.shown, err // kept as far as it streamed
		}
		if !errors.As(err, &apiErr) || apiErr.Kind() != "overloaded" {
			return nil, nil, err
		}
	}
	return nil, nil, err
}

// streamOnce sends one request to modelID and streams the reply.
//
// It is three steps so that the frame the goroutine keeps while the
// provider waits for the reply is small: a turn spends most of its life
// parked inside Provider.Stream, and the stack it holds there is the sum
// of the frames above it. Every temporary of preparing the request and of
// reading the reply lives in beginStream's and endStream's frames, which
// are gone by then (or not yet there).
func (r *run) streamOnce(modelID string) (*model.Response, error) {
	req, h := r.beginStream(modelID)
	if h == nil {
		return nil, ErrStopped
	}
	callStart := r.s.cfg.Now()
	resp, err := r.s.cfg.Provider.Stream(r.ctx, req, h)
	return r.endStream(modelID, h, callStart, resp, err)
}

// beginStream builds the request for modelID and the handler of its
// reply, announcing the request when partial messages are on. A nil
// handler means the consumer stopped the run.
//
//go:noinline
func (r *run) beginStream(modelID string) (*model.Request, *handler) {
	s := r.s
	s.applyToolChanges()
	req := s.buildRequest(modelID)
	req.Memo = &s.memo // the loop's requests only: each extends the last
	s.sent.Store(req)
	if s.cfg.Partial {
		requesting := "requesting"
		if !r.send(&message.System{Subtype: message.SubtypeStatus, SessionID: s.cfg.Env.SessionID,
			UUID: s.cfg.NewID(), Status: &message.Status{Status: &requesting}}) {
			return nil, nil
		}
	}
	r.shown = nil
	clear(r.checked)
	r.checked = r.checked[:0]
	h := &handler{r: r, modelID: modelID}
	r.modelBegin(modelID)
	return req, h
}

// endStream accounts for the call that began at callStart and returned
// resp or err, and completes the reply: blocks normalised, usage counted,
// blocks the provider did not announce emitted.
//
//go:noinline
func (r *run) endStream(modelID string, h *handler, callStart time.Time, resp *model.Response, err error) (*model.Response, error) {
	s := r.s
	r.modelEnd(modelID, resp, err)
	if resp != nil {
		r.apiTime += resp.Duration
		r.usage = r.usage.Add(resp.FailedUsage)
	} else {
		// A call that failed took time too (retries, timeouts):
		// duration_api_ms counts it.
		r.apiTime += s.cfg.Now().Sub(callStart)
		if ff, ok := err.(interface{ FailedUsage() model.Usage }); ok {
			r.usage = r.usage.Add(ff.FailedUsage())
		}
	}
	if h.stopped {
		r.stopped = true
		return nil, ErrStopped
	}
	if err != nil {
		if r.ctx.Err() != nil {
			r.keepPartial(h)
			if s.cfg.Partial {
				r.cutEvents = h.closingEvents()
			}
		}
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = modelID
	}
	for i := range resp.Content {
		r.normalizeInput(&resp.Content[i])
	}
	r.account(resp)
	// Blocks the provider did not announce (a provider without Block
	// callbacks) are emitted now, so every block is seen once.
	for i := h.emitted; i < len(resp.Content); i++ {
		r.emitBlock(resp, i, &resp.Content[i])
	}
	return resp, nil
}

// handler turns provider callbacks into stream messages.
type handler struct {
	r       *run
	msgID   string
	emitted int
	stopped bool
	// partial is the text of the blocks being streamed, kept should an
	// interrupt cut the reply short (interrupt.go); modelID and
	// requestID describe the reply for that case.
	partial   partialReply
	modelID   string
	requestID string
}

func (h *handler) Event(ev model.StreamEvent) {
	r := h.r
	h.partial.event(ev)
	if !r.s.cfg.Partial || h.stopped {
		return
	}
	if ev.Type == "message_start" {
		var ms struct {
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &ms)
		h.msgID = ms.Message.ID
	}
	m := &message.StreamEvent{Event: ev.Data, SessionID: r.s.cfg.Env.SessionID,
		ParentToolUseID: r.s.cfg.ParentToolUseID, UUID: r.s.cfg.NewID(), APIMessageID: h.msgID}
	if ev.Type == "message_start" {
		ms := ev.TTFT.Milliseconds()
		m.TTFTMs = &ms
	}
	if !r.send(m) {
		h.stopped = true
	}
}

func (h *handler) Block(index int, block model.Content, start *model.Response) {
	if h.stopped {
		return
	}
	if index < h.emitted {
		return // a retried attempt repeats blocks already shown
	}
	h.partial.done(index)
	if start != nil {
		h.requestID = start.RequestID
	}
	h.r.normalizeInput(&block)
	if !h.r.emitBlock(start, index, &block) {
		h.stopped = true
	}
	h.emitted = index + 1
}

func (h *handler) Retry(ri model.RetryInfo) {
	r := h.r
	r.modelRetry(ri)
	if h.stopped {
		return
	}
	var status *int
	if ri.Status != 0 {
		st := ri.Status
		status = &st
	}
	var detail string
	if ri.Err != nil {
		detail = ri.Err.Error()
	}
	if !r.send(&message.System{Subtype: message.SubtypeAPIRetry, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), APIRetry: &message.APIRetry{
			Attempt: ri.Attempt, MaxRetries: ri.MaxRetries, RetryDelayMs: ri.Delay.Milliseconds(),
			ErrorStatus: status, Error: ri.Kind, Detail: detail,
		}}) {
		h.stopped = true
	}
}

// emitBlock emits one assistant line for a completed block (a copy of
// *block without its cache breakpoint), and keeps it in r.shown: the reply
// enters the history as the blocks shown. The blocks of a reply go by
// pointer through the handler's path (and normalizeInput's): the
// deepest point of a turn's stack is under it, and every 240-byte copy
// there adds to the stack of every session's goroutine (see streamOnce).
func (r *run) emitBlock(resp *model.Response, index int, block *model.Content) bool {
	if block.Type == model.TypeText && block.Text == "" {
		return true
	}
	content := []model.Content{*block}
	content[0].CacheControl = nil
	m := &message.Assistant{
		Message: message.APIMessage{
			ID: resp.ID, Type: "message", Role: "assistant", Model: resp.Model,
			Content: content, Usage: resp.StartUsage,
			ContextManagement: nullJSON,
		},
		ParentToolUseID: r.s.cfg.ParentToolUseID, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), Timestamp: r.timestamp(), RequestID: resp.RequestID,
		UserMessageUUIDs: r.foldedIDs(),
	}
	r.shown = append(r.shown, m)
	return r.send(m)
}

// emitAborted emits the text an interrupt cut short as an assistant line
// marked aborted, kept in r.shown (see keepPartial).
func (r *run) emitAborted(resp *model.Response, block model.Content) {
	m := &message.Assistant{
		Message: message.APIMessage{
			ID: resp.ID, Type: "message", Role: "assistant", Model: resp.Model,
			Content: []model.Content{block}, Usage: resp.StartUsage,
			ContextManagement: nullJSON,
		},
		ParentToolUseID: r.s.cfg.ParentToolUseID, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), Timestamp: r.timestamp(), RequestID: resp.RequestID,
		UserMessageUUIDs: r.foldedIDs(), Aborted: true,
	}
	r.shown = append(r.shown, m)
	r.send(m)
}

// normalizeInput applies the tool's schema defaults to a tool_use block, so
// that the stream, the history and the tool all see the same input.
func (r *run) normalizeInput(b *model.Content) {
	if b.Type != model.TypeToolUse {
		return
	}
	e, ok := r.s.lookup(b.Name)
	if !ok {
		return
	}
	if in, err := r.validate(e, b); err == nil {
		b.Input = in
	}
}

// checkedInput is one schema check of a tool call's input: the input as
// given, and what Validate returned for it.
type checkedInput struct {
	id      string
	in, out json.RawMessage
	err     error
}

// validate checks tool call b's input against its tool's schema, as
// e.schema.Validate does, remembering the answer for the reply being
// handled: the same call with the same input, or with the input the check
// returned (defaults applied; checking it again gives it back), is
// answered from memory. streamOnce forgets at each new request.
func (r *run) validate(e *toolEntry, b *model.Content) (json.RawMessage, error) {
	for i := range r.checked {
		c := &r.checked[i]
		if c.id != b.ID {
			continue
		}
		if bytes.Equal(c.in, b.Input) || c.err == nil && bytes.Equal(c.out, b.Input) {
			return c.out, c.err
		}
	}
	out, err := e.schema.Validate(b.Name, b.Input)
	if b.ID != "" {
		r.checked = append(r.checked, checkedInput{id: b.ID, in: b.Input, out: out, err: err})
	}
	return out, err
}

var nullJSON = json.RawMessage("null")
