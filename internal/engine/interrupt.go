package engine

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/internal/quickev"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// One rule for every interruption (the run's context cancelled: an
// interrupt, a cancelled Query, a signal), applied whichever step was
// running, as the reference does it:
//
//  1. the reply being streamed is kept as far as it came: its complete
//     blocks, and the text of a block cut short as one more assistant
//     line marked aborted;
//  2. every call of the last reply that has no result gets an is_error
//     result saying it was stopped (StoppedText while it ran, RejectedText
//     before), emitted like any result; calls that finished keep their
//     real results;
//  3. a user line with the marker: InterruptedMarker after a reply, or
//     Interrupted when the reply asked for tools; with partial messages,
//     the stream events that close a cut reply follow it (closingEvents);
//  4. the result (error_during_execution).
//
// The stream, the record (the transcript) and the history get the same
// lines in that order, so the next request sends the partial reply, the
// results and the marker, and the next prompt joins the marker's user turn
// as a new prompt: the interrupted one is never asked again.

// InterruptedMarker is the text of the user line that ends a run
// interrupted while the model replied; Interrupted is the one for a run
// interrupted while (or before) its tools ran. Both are the reference's.
const InterruptedMarker = "[Request interrupted by user]"

// StoppedText is the result text of a tool call an interrupt stopped
// while it ran; RejectedText that of a call it stopped before it ran
// (waiting for its permission, or for its turn).
const (
	StoppedText = "The user interrupted the run while this tool call was running, and it was stopped. " +
		"It may have run in part or in full; check what it changed before running it again, " +
		"and wait for the user's next message."
	RejectedText = "The user interrupted the run before this tool call ran; it did not run. " +
		"Wait for the user's next message."
)

// stoppedResult is tool_use_result of a stopped call, and the
// non_execution_kind of its tool_result_meta (the reference's values).
const (
	stoppedResult = "User rejected tool use"
	stoppedKind   = "user-rejected"
)

// StoppedError is what a tool returns when an interrupt stopped it and it
// has stream lines of its own that follow its stopped result: a foreground
// subagent's task_updated and task_notification, which the reference
// writes after the Agent call's result and before the marker. Err is the
// cause; After is emitted (stream only) right after the call's result.
type StoppedError struct {
	Err   error
	After []message.Message
}

func (e *StoppedError) Error() string { return e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

// stoppedOutcome is the outcome given to call id when an interrupt stops
// it: running (StoppedText) or not yet (RejectedText).
func stoppedOutcome(id string, running bool) outcome {
	text := RejectedText
	if running {
		text = StoppedText
	}
	o := errorOutcome(id, text, stoppedResult)
	o.meta = []message.ToolResultMeta{{ID: id, NonExecutionKind: stoppedKind}}
	return o
}

// closeInterrupted ends an interrupted run (steps 2 and 3 above): the open
// calls without a result are answered as stopped, each result emitted,
// then the marker line; both go into the history and the record.
func (r *run) closeInterrupted() {
	marker := InterruptedMarker
	if o := r.open; o != nil && r.deferred == nil {
		marker = Interrupted
		for _, id := range o.ids {
			if o.has(id) {
				continue
			}
			so := stoppedOutcome(id, false)
			m := r.userMessage([]model.Content{so.block}, false)
			m.ToolUseResult, m.ToolResultMeta = so.structured, so.meta
			r.addResult(so.block, m)
			r.numTurns++
			r.send(m)
		}
		r.commitResults()
	}
	blocks := []model.Content{model.TextBlock(marker)}
	m := r.userMessage(blocks, false)
	r.commitUser(blocks, m)
	r.numTurns++
	if r.send(m) {
		for _, ev := range r.cutEvents {
			if !r.send(ev) {
				break
			}
		}
	}
	r.cutEvents = nil
}

// partialReply collects, from a reply's raw stream events, the text of
// the blocks not complete yet, so that an interrupted reply keeps the text
// that was streamed (see keepPartial).
type partialReply struct {
	// start is a copy of the message_start event's data, decoded only
	// when an interrupt needs it (head): most replies are not cut short.
	start []byte
	text  map[int]*strings.Builder // by block index, text blocks only
	// open are the blocks started and not stopped, started the number
	// of blocks started, ended whether message_stop came (see
	// closingEvents).
	open    map[int]bool
	started int
	ended   bool
}

// event takes one raw stream event.
func (p *partialReply) event(ev model.StreamEvent) {
	switch ev.Type {
	case "message_start":
		*p = partialReply{start: bytes.Clone(ev.Data)}
	case "content_block_start":
		var bs struct {
			Index        int `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content_block"`
		}
		if i, block, ok := quickev.ReadBlockStart(ev.Data); ok {
			// Only a text block's text is needed: the others go
			// undecoded.
			bs.Index = i
			if typ, ok := quickev.FirstType(block); ok && typ != model.TypeText {
				bs.ContentBlock.Type = typ
			} else if json.Unmarshal(block, &bs.ContentBlock) != nil {
				return
			}
		} else if json.Unmarshal(ev.Data, &bs) != nil {
			return
		}
		if p.open == nil {
			p.open = map[int]bool{}
		}
		p.open[bs.Index] = true
		p.started = max(p.started, bs.Index+1)
		if bs.ContentBlock.Type != model.TypeText {
			return
		}
		if p.text == nil {
			p.text = map[int]*strings.Builder{}
		}
		b := &strings.Builder{}
		b.WriteString(bs.ContentBlock.Text)
		p.text[bs.Index] = b
	case "content_block_stop":
		var bs struct {
			Index int `json:"index"`
		}
		if i, ok := quickev.ReadStop(ev.Data); ok {
			delete(p.open, i)
		} else if json.Unmarshal(ev.Data, &bs) == nil {
			delete(p.open, bs.Index)
		}
	case "message_stop":
		p.ended = true
	case "content_block_delta":
		if len(p.text) == 0 || !bytes.Contains(ev.Data, []byte(`"text_delta"`)) {
			return // no text block open, or not text
		}
		var bd struct {
			Index int `json:"index"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if d, ok := quickev.ReadDelta(ev.Data); ok {
			if d.Type != "text_delta" || d.Field != "text" {
				return
			}
			bd.Index, bd.Delta.Text = d.Index, d.Value
		} else if json.Unmarshal(ev.Data, &bd) != nil || bd.Delta.Type != "text_delta" {
			return
		}
		if b := p.text[bd.Index]; b != nil {
			b.WriteString(bd.Delta.Text)
		}
	}
}

// replyHead is what an interrupted reply's message_start said of it.
type replyHead struct {
	ID    string          `json:"id"`
	Model string          `json:"model"`
	Usage json.RawMessage `json:"usage"`
}

// head decodes the message_start event kept; the zero replyHead when there
// was none or it does not decode.
func (p *partialReply) head() replyHead {
	var ms struct {
		Message replyHead `json:"message"`
	}
	if len(p.start) > 0 {
		_ = json.Unmarshal(p.start, &ms)
	}
	return ms.Message
}

// done forgets block index, which is complete (and shown).
func (p *partialReply) done(index int) { delete(p.text, index) }

// keepPartial, for a reply an interrupt cut short, emits the text of its
// incomplete blocks (after index from, the blocks shown so far) as
// assistant lines marked aborted, kept in r.shown like the complete ones.
func (r *run) keepPartial(h *handler) {
	p := &h.partial
	idx := make([]int, 0, len(p.text))
	for i, b := range p.text {
		if i >= h.emitted && b.Len() > 0 {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	head := p.head()
	for _, i := range idx {
		var usage model.Usage
		_ = json.Unmarshal(head.Usage, &usage)
		resp := &model.Response{ID: head.ID, Model: head.Model, StartUsage: usage, RequestID: h.requestID}
		if resp.Model == "" {
			resp.Model = h.modelID
		}
		r.emitAborted(resp, model.TextBlock(p.text[i].String()))
	}
}

// isMarker reports whether b is the text block of an interrupt's marker.
func isMarker(b model.Content) bool {
	return b.Type == model.TypeText && (b.Text == InterruptedMarker || b.Text == Interrupted)
}

// endsInterrupted reports whether h ends with an interrupt's marker: the
// conversation was interrupted and nothing was asked since.
func endsInterrupted(h []model.Message) bool {
	n := len(h)
	if n == 0 || h[n-1].Role != "user" || len(h[n-1].Content) == 0 {
		return false
	}
	c := h[n-1].Content
	return isMarker(c[len(c)-1])
}

// NoResponse is the text of the assistant turn the reference puts after
// the marker of a resumed interrupted conversation, before the next
// prompt.
const NoResponse = "No response requested."

// answerMarker, for a conversation resumed after an interrupt (its
// history ends with the marker; see SetHistory), adds the synthetic
// assistant turn NoResponse before the run's prompt: in the history and
// the record, not in the stream, as the reference does.
func (r *run) answerMarker() {
	s := r.s
	if !s.resumedInterrupted {
		return
	}
	s.resumedInterrupted = false
	if !endsInterrupted(s.history) {
		return
	}
	block := model.TextBlock(NoResponse)
	s.appendHistory("assistant", []model.Content{block})
	r.record(&message.Assistant{
		Message: message.APIMessage{
			ID: "msg_" + s.cfg.NewID(), Type: "message", Role: "assistant", Model: "<synthetic>",
			Content: []model.Content{block}, ContextManagement: nullJSON,
		},
		ParentToolUseID: s.cfg.ParentToolUseID, SessionID: s.cfg.Env.SessionID,
		UUID: s.cfg.NewID(), Timestamp: r.timestamp(),
	})
}
