package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/quickev"
	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/model"
)

// streamError is an error event in the stream: the API failed after it had
// started answering.
type streamError struct {
	Type    string
	Message string
}

func (e *streamError) Error() string {
	return fmt.Sprintf("stream error event: %s: %s", e.Type, e.Message)
}

// malformed returns an error wrapping model.ErrMalformedStream.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", model.ErrMalformedStream, fmt.Sprintf(format, args...))
}

// streamState assembles one attempt's reply from its events and reports them
// to the handler. It never panics, whatever the events hold.
type streamState struct {
	h       model.Handler
	elapsed func() time.Duration // time since the request was sent
	onEvent func()               // called for every event read, pings included; may be nil

	resp    model.Response
	started bool // message_start seen
	done    bool // message_stop seen
	blocks  []*blockBuilder
	n       int // events seen, pings included
}

// newStreamState returns the state of a reply's stream, on the heap (it is
// not inlined): in its reader's frame it would add its size to the stack of
// every session's goroutine while it reads (see Provider.exchange).
//
//go:noinline
func newStreamState(h model.Handler, elapsed func() time.Duration) *streamState {
	return &streamState{h: h, elapsed: elapsed}
}

// eventNames are the event names the API sends, read without allocating.
var eventNames = []string{"content_block_delta", "content_block_start", "content_block_stop",
	"message_start", "message_delta", "message_stop", "ping", "error"}

// read decodes the events of res's body until message_stop. It returns the
// reply, a *streamError for an error event, or an error wrapping
// model.ErrMalformedStream (the body's read error included, so a dropped
// connection or a cancelled context can be told by errors.Is).
func (s *streamState) read(res *http.Response) (*model.Response, error) {
	if res.Body == nil {
		return nil, malformed("response has no body")
	}
	dec := sse.NewReader(res.Body, sse.PooledSize, eventNames...)
	defer dec.Release()
	for dec.Next() {
		if s.onEvent != nil {
			s.onEvent()
		}
		if err := s.handle(dec.Event(), bytes.TrimSuffix(dec.Data(), []byte("\n"))); err != nil {
			return nil, err
		}
		if s.done {
			r := s.resp
			return &r, nil
		}
	}
	if err := dec.Err(); err != nil {
		return nil, fmt.Errorf("%w: reading the stream failed after %d events: %w", model.ErrMalformedStream, s.n, err)
	}
	if !s.started {
		if ct := res.Header.Get("Content-Type"); s.n == 0 && ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
			return nil, malformed("response is not an event stream (Content-Type %s)", ct)
		}
		return nil, malformed("stream ended after %d events without message_start", s.n)
	}
	return nil, malformed("stream ended after %d events without message_stop", s.n)
}

// Event payloads, as far as they are read.
type (
	startEvent struct {
		Message *struct {
			ID           string          `json:"id"`
			Type         string          `json:"type"`
			Role         string          `json:"role"`
			Model        string          `json:"model"`
			StopReason   *string         `json:"stop_reason"`
			StopSequence *string         `json:"stop_sequence"`
			Usage        json.RawMessage `json:"usage"`
		} `json:"message"`
	}
	blockStartEvent struct {
		Index        *int            `json:"index"`
		ContentBlock json.RawMessage `json:"content_block"`
	}
	blockDeltaEvent struct {
		Index *int `json:"index"`
		Delta *struct {
			Type        string  `json:"type"`
			Text        *string `json:"text"`
			PartialJSON *string `json:"partial_json"`
			Thinking    *string `json:"thinking"`
			Signature   *string `json:"signature"`
		} `json:"delta"`
	}
	blockStopEvent struct {
		Index *int `json:"index"`
	}
	messageDeltaEvent struct {
		Delta *struct {
			StopReason   *string         `json:"stop_reason"`
			StopSequence json.RawMessage `json:"stop_sequence"`
		} `json:"delta"`
		Usage json.RawMessage `json:"usage"`
	}
	errorEvent struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
)

// handle applies one event. name is the SSE event name, data its data.
// quickDelta applies a content_block_delta event read by readQuickDelta.
// Not inlined: handle's frame is under the handler's Block, at the deepest
// point of a turn's stack (see Provider.exchange).
//
//go:noinline
func (s *streamState) quickDelta(data []byte, d *quickDelta) error {
	const typ = "content_block_delta"
	if err := s.checkStarted(typ); err != nil {
		return err
	}
	var text, partialJSON, thinking, signature *string
	switch d.field {
	case "text":
		text = &d.value
	case "partial_json":
		partialJSON = &d.value
	case "thinking":
		thinking = &d.value
	case "signature":
		signature = &d.value
	}
	return s.applied(typ, data, s.applyDelta(&d.index, d.typ, text, partialJSON, thinking, signature))
}

func (s *streamState) handle(name string, data []byte) error {
	s.n++
	if name == "ping" {
		return nil
	}
	if name == "error" {
		return parseError(data)
	}
	if d, ok := readQuickDelta(data); ok {
		return s.quickDelta(data, &d)
	}
	if i, ok := readQuickStop(data); ok {
		const typ = "content_block_stop"
		if err := s.checkStarted(typ); err != nil {
			return err
		}
		return s.applied(typ, data, s.stopBlock(&i))
	}
	if typ, ok := readQuickType(data); ok && (name == "" || name == typ) {
		// An event decoded whole by apply: its type read by hand, not by
		// a decoding of its own (quick.go).
		return s.apply(typ, data)
	}
	return s.decodedEvent(name, data)
}

// decodedEvent handles an event the quick readers did not take, its type
// decoded with encoding/json. Not inlined: see quickDelta.
//
//go:noinline
func (s *streamState) decodedEvent(name string, data []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		if name != "" && !knownEvent(name) {
			return nil // an event this package does not know, unreadable: ignore it
		}
		return malformed("event %d (%s): invalid JSON: %v", s.n, orUnnamed(name), err)
	}
	typ := head.Type
	if typ == "" {
		typ = name
	}
	switch {
	case typ == "ping":
		return nil
	case typ == "error":
		return parseError(data)
	case !knownEvent(typ):
		// An event this package does not know: pass it on, ignore it.
		s.h.Event(model.StreamEvent{Type: typ, Data: data})
		return nil
	}
	return s.apply(typ, data)
}

// apply applies an event of a known type typ (not ping or error) and passes
// it on (applied). data's type may have been read by hand without the rest
// being checked: a decoding that finds data is not JSON says so.
func (s *streamState) apply(typ string, data []byte) error {
	if err := s.checkStarted(typ); err != nil {
		return err
	}
	var err error
	switch typ {
	case "message_start":
		err = s.messageStart(data)
	case "content_block_start":
		err = s.blockStart(data)
	case "content_block_delta":
		err = s.blockDelta(data)
	case "content_block_stop":
		err = s.blockStop(data)
	case "message_delta":
		err = s.messageDelta(data)
	case "message_stop":
		err = s.messageStop()
	}
	if _, bad := errors.AsType[*json.SyntaxError](err); bad {
		err = fmt.Errorf("invalid JSON: %w", err)
	}
	return s.applied(typ, data, err)
}

// checkStarted fails for an event of type typ that needs message_start to
// have come first and came before it.
func (s *streamState) checkStarted(typ string) error {
	if typ != "message_start" && !s.started {
		return malformed("event %d: %s before message_start", s.n, typ)
	}
	return nil
}

// applied finishes an event of a known type typ (not ping or error) whose
// data was applied with the result err: it fails with err, or passes the
// event to the handler.
func (s *streamState) applied(typ string, data []byte, err error) error {
	if err != nil {
		return malformed("event %d (%s): %v", s.n, typ, err)
	}
	ev := model.StreamEvent{Type: typ, Data: data}
	if typ == "message_start" {
		ev.TTFT = s.resp.TTFT
	}
	s.h.Event(ev)
	return nil
}

// knownEvent reports whether typ is an event type of a reply's stream.
func knownEvent(typ string) bool {
	switch typ {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop", "ping", "error":
		return true
	}
	return false
}

func orUnnamed(name string) string {
	if name == "" {
		return "unnamed"
	}
	return name
}

func parseError(data []byte) error {
	var e errorEvent
	if json.Unmarshal(data, &e) != nil || e.Error == nil {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 1000 {
			msg = msg[:1000] + "…"
		}
		return &streamError{Type: "error", Message: msg}
	}
	return &streamError{Type: e.Error.Type, Message: e.Error.Message}
}

func (s *streamState) messageStart(data []byte) error {
	if s.started {
		return errors.New("second message_start")
	}
	st, ok := quickev.ReadStart(data)
	if !ok {
		var err error
		if st, err = decodeStart(data); err != nil {
			return err
		}
	}
	s.started = true
	s.resp = model.Response{
		ID:           st.ID,
		Type:         st.Type,
		Role:         st.Role,
		Model:        st.Model,
		StopSequence: st.StopSequence,
		Usage:        cloneUsage(st.Usage),
		StartUsage:   st.Usage,
		TTFT:         s.elapsed(),
	}
	if st.StopReason != nil {
		s.resp.StopReason = *st.StopReason
	}
	return nil
}

// decodeStart reads a message_start event with encoding/json: what
// quickev.ReadStart does not accept.
func decodeStart(data []byte) (quickev.Start, error) {
	var ev startEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return quickev.Start{}, err
	}
	m := ev.Message
	if m == nil {
		return quickev.Start{}, errors.New("no message")
	}
	st := quickev.Start{ID: m.ID, Type: m.Type, Role: m.Role, Model: m.Model,
		StopReason: m.StopReason, StopSequence: m.StopSequence}
	if len(m.Usage) > 0 && string(m.Usage) != "null" {
		if err := json.Unmarshal(m.Usage, &st.Usage); err != nil {
			return quickev.Start{}, fmt.Errorf("usage: %v", err)
		}
	}
	return st, nil
}

func (s *streamState) blockStart(data []byte) error {
	var ev blockStartEvent
	if i, block, ok := readQuickBlockStart(data); ok {
		ev.Index, ev.ContentBlock = &i, block // the block is decoded below
	} else if err := json.Unmarshal(data, &ev); err != nil {
		return err
	}
	if ev.Index == nil {
		return errors.New("no index")
	}
	if *ev.Index != len(s.blocks) {
		return fmt.Errorf("block index %d, want %d", *ev.Index, len(s.blocks))
	}
	if len(ev.ContentBlock) == 0 || string(ev.ContentBlock) == "null" {
		return errors.New("no content_block")
	}
	var c model.Content
	if err := json.Unmarshal(ev.ContentBlock, &c); err != nil {
		return err
	}
	b := &blockBuilder{c: c, raw: ev.ContentBlock}
	b.text.WriteString(c.Text)
	b.thinking.WriteString(c.Thinking)
	b.signature.WriteString(c.Signature)
	s.blocks = append(s.blocks, b)
	return nil
}

// block returns the open block at index.
func (s *streamState) block(index *int) (*blockBuilder, error) {
	if index == nil {
		return nil, errors.New("no index")
	}
	i := *index
	if i < 0 || i >= len(s.blocks) {
		return nil, fmt.Errorf("block %d was never started", i)
	}
	if s.blocks[i].done {
		return nil, fmt.Errorf("block %d already stopped", i)
	}
	return s.blocks[i], nil
}

func (s *streamState) blockDelta(data []byte) error {
	var ev blockDeltaEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return err
	}
	if ev.Delta == nil {
		if _, err := s.block(ev.Index); err != nil {
			return err
		}
		return errors.New("no delta")
	}
	return s.applyDelta(ev.Index, ev.Delta.Type, ev.Delta.Text, ev.Delta.PartialJSON, ev.Delta.Thinking, ev.Delta.Signature)
}

// applyDelta adds a delta to the open block at index.
func (s *streamState) applyDelta(index *int, typ string, text, partialJSON, thinking, signature *string) error {
	b, err := s.block(index)
	if err != nil {
		return err
	}
	return b.apply(typ, text, partialJSON, thinking, signature)
}

func (s *streamState) blockStop(data []byte) error {
	var ev blockStopEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return err
	}
	return s.stopBlock(ev.Index)
}

// stopBlock completes the open block at index.
func (s *streamState) stopBlock(index *int) error {
	b, err := s.block(index)
	if err != nil {
		return err
	}
	if err := b.complete(*index); err != nil {
		return err
	}
	s.h.Block(*index, b.final, s.snapshot())
	return nil
}

// complete finishes b, block number index, into b.final. It and snapshot
// are not inlined into stopBlock: the handler's Block runs under it, at
// the deepest point of a turn's stack, and their temporaries would add to
// the stack every session's goroutine grows to.
//
//go:noinline
func (b *blockBuilder) complete(index int) error {
	c, err := b.finish()
	if err != nil {
		return fmt.Errorf("block %d: %v", index, err)
	}
	b.done, b.final = true, c
	return nil
}

// snapshot returns a copy of the reply so far, with the blocks completed.
//
//go:noinline
func (s *streamState) snapshot() *model.Response {
	r := s.resp
	r.Usage = cloneUsage(r.Usage)
	r.Content = nil
	for _, b := range s.blocks {
		if b.done {
			r.Content = append(r.Content, b.final)
		}
	}
	return &r
}

func (s *streamState) messageDelta(data []byte) error {
	return applyMessageDelta(&s.resp, data)
}

// applyMessageDelta applies the message_delta event data to *resp: the
// stop reason and sequence it carries, its usage merged. On error *resp
// is unchanged. It works in place: a Response is 384 bytes, and a copy in
// and out would sit in frames under the stream's reader, deep in a turn's
// stack (see Provider.exchange).
func applyMessageDelta(resp *model.Response, data []byte) error {
	if d, ok := quickev.ReadMessageDelta(data); ok {
		u := cloneUsage(resp.Usage)
		if d.Usage == nil || quickev.ReadUsage(d.Usage, &u) {
			if d.StopReason != nil {
				resp.StopReason = *d.StopReason
			}
			if d.SetSequence {
				resp.StopSequence = d.StopSequence
			}
			if d.Usage != nil {
				resp.Usage = u
			}
			return nil
		}
	}
	return decodeMessageDeltaInto(resp, data)
}

// decodeMessageDeltaInto is decodeMessageDelta on *resp, in place.
//
//go:noinline
func decodeMessageDeltaInto(resp *model.Response, data []byte) error {
	r, err := decodeMessageDelta(*resp, data)
	if err != nil {
		return err
	}
	*resp = r
	return nil
}

// decodeMessageDelta is applyMessageDelta with encoding/json: for what
// the quick readers do not accept.
func decodeMessageDelta(resp model.Response, data []byte) (model.Response, error) {
	var ev messageDeltaEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return resp, err
	}
	if ev.Delta != nil {
		if ev.Delta.StopReason != nil {
			resp.StopReason = *ev.Delta.StopReason
		}
		switch seq := ev.Delta.StopSequence; {
		case len(seq) == 0:
		case string(seq) == "null":
			resp.StopSequence = nil
		default:
			var v string
			if err := json.Unmarshal(seq, &v); err != nil {
				return resp, fmt.Errorf("stop_sequence: %v", err)
			}
			resp.StopSequence = &v
		}
	}
	if len(ev.Usage) > 0 && string(ev.Usage) != "null" {
		u, err := overrideUsage(resp.Usage, ev.Usage)
		if err != nil {
			return resp, fmt.Errorf("usage: %v", err)
		}
		resp.Usage = u
	}
	return resp, nil
}

func (s *streamState) messageStop() error {
	content := make([]model.Content, 0, len(s.blocks))
	for i, b := range s.blocks {
		if !b.done {
			return fmt.Errorf("block %d never stopped", i)
		}
		content = append(content, b.final)
	}
	s.resp.Content = content
	s.done = true
	return nil
}

// overrideUsage returns u with the fields that raw carries (not null)
// replaced; nested objects are merged field by field.
func overrideUsage(u model.Usage, raw json.RawMessage) (model.Usage, error) {
	if !bytes.Contains(raw, []byte("null")) {
		// Nothing to leave out: decoding onto a copy overwrites exactly
		// the fields raw carries and merges the nested objects (decoded
		// into the copies cloneUsage made), without the round trip below.
		u = cloneUsage(u)
		err := json.Unmarshal(raw, &u)
		return u, err
	}
	return overrideUsageMap(u, raw)
}

// overrideUsageMap is overrideUsage through a map, leaving out the
// fields that are null.
func overrideUsageMap(u model.Usage, raw json.RawMessage) (model.Usage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return u, err
	}
	for k, v := range m {
		if string(v) == "null" {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return u, err
	}
	u = cloneUsage(u)
	if err := json.Unmarshal(b, &u); err != nil {
		return u, err
	}
	return u, nil
}

// cloneUsage returns u with its nested objects copied.
func cloneUsage(u model.Usage) model.Usage {
	if u.CacheCreation != nil {
		c := *u.CacheCreation
		u.CacheCreation = &c
	}
	if u.ServerToolUse != nil {
		t := *u.ServerToolUse
		u.ServerToolUse = &t
	}
	return u
}

// blockBuilder assembles one content block from its start and deltas.
type blockBuilder struct {
	c     model.Content   // as content_block_start gave it
	raw   json.RawMessage // content_block_start's block, verbatim
	done  bool
	final model.Content

	text, thinking, signature strings.Builder
	input                     []byte
	gotInput                  bool // an input_json_delta arrived
}

// known reports whether the block's type is one this package assembles.
func (b *blockBuilder) known() bool {
	switch b.c.Type {
	case model.TypeText, model.TypeThinking, model.TypeRedactedThinking, model.TypeToolUse, model.TypeServerToolUse:
		return true
	}
	return false
}

// apply adds one delta. Deltas of unknown types are ignored, and so are the
// text and thinking deltas of block types this package does not assemble; a
// known delta on a known block of another type is an error.
func (b *blockBuilder) apply(typ string, text, partialJSON, thinking, signature *string) error {
	mismatch := func() error {
		if !b.known() {
			return nil
		}
		return fmt.Errorf("%s for a %s block", typ, b.c.Type)
	}
	switch typ {
	case "text_delta":
		if b.c.Type != model.TypeText {
			return mismatch()
		}
		if text != nil {
			b.text.WriteString(*text)
		}
	case "thinking_delta":
		if b.c.Type != model.TypeThinking {
			return mismatch()
		}
		if thinking != nil {
			b.thinking.WriteString(*thinking)
		}
	case "signature_delta":
		if b.c.Type != model.TypeThinking {
			return mismatch()
		}
		if signature != nil {
			b.signature.WriteString(*signature)
		}
	case "input_json_delta":
		if b.known() && b.c.Type != model.TypeToolUse && b.c.Type != model.TypeServerToolUse {
			return mismatch()
		}
		b.gotInput = true
		if partialJSON != nil {
			b.input = append(b.input, *partialJSON...)
		}
	}
	return nil
}

// finish returns the completed block.
func (b *blockBuilder) finish() (model.Content, error) {
	c := b.c
	switch c.Type {
	case model.TypeText:
		c.Text = b.text.String()
	case model.TypeThinking:
		c.Thinking = b.thinking.String()
		c.Signature = b.signature.String()
	case model.TypeRedactedThinking:
		c.Raw = slices.Clone(b.raw)
	case model.TypeToolUse, model.TypeServerToolUse:
		if b.gotInput {
			in, err := inputJSON(b.input)
			if err != nil {
				return c, err
			}
			c.Input = in
		}
		if len(bytes.TrimSpace(c.Input)) == 0 {
			c.Input = json.RawMessage("{}")
		}
	default:
		c.Raw = slices.Clone(b.raw)
		if b.gotInput {
			in, err := inputJSON(b.input)
			if err != nil {
				return c, err
			}
			raw, err := setField(b.raw, "input", in)
			if err != nil {
				return c, err
			}
			c.Raw, c.Input = raw, in
		}
	}
	return c, nil
}

// inputJSON checks accumulated input_json_delta text: empty means {}.
func inputJSON(acc []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(acc)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(acc) {
		return nil, fmt.Errorf("input is not valid JSON: %.200q", acc)
	}
	return json.RawMessage(slices.Clone(acc)), nil
}

// setField returns the JSON object obj with key set to v.
func setField(obj json.RawMessage, key string, v json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[key] = v
	return json.Marshal(m)
}
