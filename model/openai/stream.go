package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/model"
)

// streamError is an error object sent inside the stream: the server failed
// after it had started answering.
type streamError struct {
	Type    string
	Message string
}

func (e *streamError) Error() string {
	return fmt.Sprintf("stream error: %s: %s", e.Type, e.Message)
}

// malformed returns an error wrapping model.ErrMalformedStream.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", model.ErrMalformedStream, fmt.Sprintf(format, args...))
}

// chunk is one chat.completion.chunk, as far as it is read. Fields that
// compatible servers add (reasoning_content, reasoning) are read too.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string         `json:"content"`
			Refusal          *string         `json:"refusal"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chunkUsage   `json:"usage"`
	Error *errorPayload `json:"error"`
}

type chunkUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// errorPayload is an error object, in a stream or an error response body.
// Code is a string for OpenAI and a number for some compatible servers.
type errorPayload struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// usage maps a Chat Completions usage object to the Messages API's: cached
// prompt tokens are cache reads, the rest of the prompt is input.
func (u *chunkUsage) usage() model.Usage {
	var cached int64
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	cached = min(max(cached, 0), max(u.PromptTokens, 0))
	return model.Usage{
		InputTokens:          max(u.PromptTokens-cached, 0),
		CacheReadInputTokens: cached,
		OutputTokens:         max(u.CompletionTokens, 0),
	}
}

// stopReason maps a finish_reason to a Messages API stop_reason. A reply
// with tool calls stops for tool use whatever the server said (some send
// "stop" with them).
func stopReason(finish string, toolCalls bool) string {
	switch {
	case finish == "length":
		return "max_tokens"
	case finish == "content_filter":
		return "refusal"
	case toolCalls || finish == "tool_calls" || finish == "function_call":
		return "tool_use"
	}
	return "end_turn"
}

// callBuilder assembles one tool call from its deltas.
type callBuilder struct {
	id, name string
	args     strings.Builder
}

// streamState turns one attempt's chunks into the Messages API's events
// and the reply. It never panics, whatever the chunks hold.
type streamState struct {
	h       model.Handler
	elapsed func() time.Duration // time since the request was sent
	onChunk func()               // called for every event read; may be nil
	model   string               // the model asked for, when chunks name none
	// responses reads the Responses API's events instead of chunks.
	responses bool

	resp     model.Response
	started  bool // message_start sent
	finished bool // a finish_reason arrived
	finish   string
	n        int // events read

	content  []model.Content // completed blocks
	open     string          // type of the open text or thinking block, "" for none
	openText strings.Builder
	calls    []*callBuilder
	usage    *model.Usage
}

// read decodes body's events until [DONE] (or the end of a stream that
// finished). It returns the reply, a *streamError for an error in the
// stream, or an error wrapping model.ErrMalformedStream (a read error
// included, so a dropped connection or a cancelled context can be told by
// errors.Is).
func (s *streamState) read(body io.Reader) (*model.Response, error) {
	// Some servers close the stream right after the last data line.
	dec := sse.NewReader(body, 8<<10)
	dec.KeepUnterminated = true
	for dec.Next() {
		s.n++
		if s.onChunk != nil {
			s.onChunk()
		}
		data := bytes.TrimSpace(dec.Data())
		if string(data) == "[DONE]" {
			return s.end()
		}
		if s.responses {
			done, err := s.handleResponses(dec.Event(), data)
			if err != nil {
				return nil, err
			}
			if done {
				return s.end()
			}
			continue
		}
		if err := s.handle(dec.Event(), data); err != nil {
			return nil, err
		}
	}
	if err := dec.Err(); err != nil {
		return nil, fmt.Errorf("%w: reading the stream failed after %d events: %w", model.ErrMalformedStream, s.n, err)
	}
	if !s.finished {
		return nil, malformed("stream ended after %d events without a finish_reason", s.n)
	}
	return s.end()
}

// completion is a whole chat.completion object, as far as it is read.
type completion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content          *string         `json:"content"`
			Refusal          *string         `json:"refusal"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chunkUsage `json:"usage"`
}

// readCompletion reads a non-streamed answer (a server that ignored
// stream: true) and reports it as if it had streamed in one piece.
func (s *streamState) readCompletion(body io.Reader) (*model.Response, error) {
	raw, err := io.ReadAll(io.LimitReader(body, sse.MaxLine))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the response failed: %w", model.ErrMalformedStream, err)
	}
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, malformed("response is neither an event stream nor a completion: %v: %s", err, truncate(string(raw), 200))
	}
	s.start(c.ID, c.Model)
	if c.Usage != nil {
		u := c.Usage.usage()
		s.usage = &u
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		m := &ch.Message
		if m.ReasoningContent != nil {
			s.thinking(*m.ReasoningContent)
		} else if r := m.Reasoning; len(r) > 0 && r[0] == '"' {
			var t string
			if json.Unmarshal(r, &t) == nil {
				s.thinking(t)
			}
		}
		if m.Content != nil {
			s.text(*m.Content)
		}
		if m.Refusal != nil {
			s.text(*m.Refusal)
		}
		for i, tc := range m.ToolCalls {
			s.toolDelta(&i, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
		}
	}
	return s.end()
}

// handle applies one event.
func (s *streamState) handle(name string, data []byte) error {
	if len(data) == 0 {
		return nil // a keep-alive
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		if name == "error" {
			return &streamError{Type: "error", Message: truncate(string(data), 1000)}
		}
		return malformed("event %d: invalid JSON chunk: %v: %s", s.n, err, truncate(string(data), 200))
	}
	if c.Error != nil || name == "error" {
		e := &streamError{Type: "error", Message: truncate(string(data), 1000)}
		if c.Error != nil {
			e.Message = c.Error.Message
			if c.Error.Type != "" {
				e.Type = c.Error.Type
			}
		}
		return e
	}
	s.start(c.ID, c.Model)
	if c.Usage != nil {
		u := c.Usage.usage()
		s.usage = &u
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		d := &ch.Delta
		if d.ReasoningContent != nil {
			s.thinking(*d.ReasoningContent)
		} else if r := d.Reasoning; len(r) > 0 && r[0] == '"' {
			var t string
			if json.Unmarshal(r, &t) == nil {
				s.thinking(t)
			}
		}
		if d.Content != nil {
			s.text(*d.Content)
		}
		if d.Refusal != nil {
			s.text(*d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			s.toolDelta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finished, s.finish = true, *ch.FinishReason
		}
	}
	return nil
}

// start sends message_start on the first chunk.
func (s *streamState) start(id, modelName string) {
	if s.started {
		return
	}
	s.started = true
	if id == "" {
		id = "chatcmpl-" + randomHex(12)
	}
	if modelName == "" {
		modelName = s.model
	}
	s.resp = model.Response{ID: id, Type: "message", Role: "assistant", Model: modelName, TTFT: s.elapsed()}
	s.emitTTFT("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": modelName,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": model.Usage{},
		},
	}, s.resp.TTFT)
}

// text adds streamed text, opening a text block when needed.
func (s *streamState) text(t string) {
	if t == "" {
		return
	}
	s.openBlock(model.TypeText)
	s.openText.WriteString(t)
	s.emit("content_block_delta", map[string]any{
		"type": "content_block_delta", "index": len(s.content),
		"delta": map[string]any{"type": "text_delta", "text": t},
	})
}

// thinking adds streamed reasoning, opening a thinking block when needed.
func (s *streamState) thinking(t string) {
	if t == "" {
		return
	}
	s.openBlock(model.TypeThinking)
	s.openText.WriteString(t)
	s.emit("content_block_delta", map[string]any{
		"type": "content_block_delta", "index": len(s.content),
		"delta": map[string]any{"type": "thinking_delta", "thinking": t},
	})
}

// openBlock makes a block of type typ the open one, closing another.
func (s *streamState) openBlock(typ string) {
	if s.open == typ {
		return
	}
	s.closeBlock()
	s.open = typ
	var cb any = map[string]any{"type": "text", "text": ""}
	if typ == model.TypeThinking {
		cb = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	}
	s.emit("content_block_start", map[string]any{"type": "content_block_start", "index": len(s.content), "content_block": cb})
}

// closeBlock completes the open text or thinking block, if any.
func (s *streamState) closeBlock() {
	if s.open == "" {
		return
	}
	c := model.Content{Type: s.open}
	if s.open == model.TypeThinking {
		c.Thinking = s.openText.String()
	} else {
		c.Text = s.openText.String()
	}
	s.open = ""
	s.openText.Reset()
	s.complete(c)
}

// complete adds a finished block: Block, then content_block_stop.
func (s *streamState) complete(c model.Content) {
	i := len(s.content)
	s.content = append(s.content, c)
	snap := s.resp
	snap.Content = append([]model.Content(nil), s.content...)
	s.h.Block(i, c, &snap)
	s.emit("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// toolDelta adds a piece of a tool call. Calls are told apart by index;
// a server that sends none gets a new call for each new id.
func (s *streamState) toolDelta(index *int, id, name, args string) {
	var b *callBuilder
	switch {
	case index != nil && *index >= 0 && *index < 1024:
		for len(s.calls) <= *index {
			s.calls = append(s.calls, &callBuilder{})
		}
		b = s.calls[*index]
	case id != "" || len(s.calls) == 0:
		for _, c := range s.calls {
			if c.id == id {
				b = c
			}
		}
		if b == nil {
			b = &callBuilder{}
			s.calls = append(s.calls, b)
		}
	default:
		b = s.calls[len(s.calls)-1]
	}
	if id != "" && b.id == "" {
		b.id = id
	}
	if name != "" && b.name == "" {
		b.name = name
	}
	b.args.WriteString(args)
}

// end completes the reply: the open block, the tool calls (each sent as a
// whole, since servers may interleave parallel calls), message_delta and
// message_stop.
func (s *streamState) end() (*model.Response, error) {
	if !s.started {
		return nil, malformed("stream ended after %d events without a chunk", s.n)
	}
	s.closeBlock()
	calls := 0
	for _, b := range s.calls {
		if b.name == "" && b.id == "" && b.args.Len() == 0 {
			continue // an index the server skipped
		}
		if b.name == "" {
			return nil, malformed("tool call %q has no function name", b.id)
		}
		calls++
		id := b.id
		if id == "" {
			id = "call_" + randomHex(12)
		}
		in := toolInput(b.args.String())
		i := len(s.content)
		s.emit("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": b.name, "input": map[string]any{}}})
		s.emit("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		s.complete(model.Content{Type: model.TypeToolUse, ID: id, Name: b.name, Input: in})
	}
	if s.usage != nil {
		s.resp.Usage = *s.usage
	}
	s.resp.StopReason = stopReason(s.finish, calls > 0)
	s.resp.Content = s.content
	if s.resp.Content == nil {
		s.resp.Content = []model.Content{}
	}
	s.emit("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": s.resp.StopReason, "stop_sequence": nil},
		"usage": s.resp.Usage})
	s.emit("message_stop", map[string]any{"type": "message_stop"})
	r := s.resp
	return &r, nil
}

// toolInput returns a call's arguments as the tool input. Arguments that
// are not a JSON object (a small model's slip) are passed on as
// {"invalid_arguments": text}, so the tool rejects them and the model
// sees why, rather than the whole reply failing.
func toolInput(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) && t[0] == '{' {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(map[string]string{"invalid_arguments": args})
	return b
}

func (s *streamState) emit(typ string, v any) { s.emitTTFT(typ, v, 0) }

func (s *streamState) emitTTFT(typ string, v any, ttft time.Duration) {
	b, err := json.Marshal(v)
	if err != nil {
		return // cannot happen: the values are maps of plain values
	}
	s.h.Event(model.StreamEvent{Type: typ, Data: b, TTFT: ttft})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var errNoBody = errors.New("response has no body")
