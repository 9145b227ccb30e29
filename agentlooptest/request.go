package agentlooptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/model"
)

// Values of [Request.Kind]: how the server classified and answered a request.
const (
	// KindMain: a POST /v1/messages answered from the main queue.
	KindMain = "main"
	// KindRouted: a POST /v1/messages answered by a Route rule or the
	// router function, without consuming the main queue.
	KindRouted = "routed"
	// KindExhausted: a POST /v1/messages that found its queue (the main one
	// or a Route rule's) empty and got the exhausted reply.
	KindExhausted = "exhausted"
	// KindInvalid: a POST /v1/messages whose body was not a valid request;
	// it got a 400 invalid_request_error (413 if too large).
	KindInvalid = "invalid"
	// KindCountTokens: a POST /v1/messages/count_tokens.
	KindCountTokens = "count_tokens"
	// KindOther: any other request (GET /v1/models, unknown endpoints).
	KindOther = "other"
)

// Request is one recorded HTTP request.
//
// The server records a Request completely before it answers it and never
// changes it afterwards, so a Request obtained from the [Server] may be read
// from any goroutine. Treat it as read-only.
type Request struct {
	Method   string
	Path     string // URL path without the query, e.g. /v1/messages
	RawQuery string // URL query without '?', e.g. beta=true
	Header   http.Header
	Body     []byte // raw body (decompressed if it was gzip or deflate encoded)
	// Params is the decoded body of a messages (or count_tokens) request.
	// A string system prompt or string message content is decoded as one
	// text block. Params.Betas holds the anthropic-beta header's values.
	//
	// Params' messages and system blocks are the request's own: their
	// slices, the blocks' pointers (Source, CacheControl, IsError) and raw
	// bytes (Input, Raw) are copies that no other Request shares, though
	// the server decodes a message or system prompt it has seen before
	// only once. The Tools slice is a copy too, but the tools' InputSchema
	// bytes and Extra maps are shared with other requests that sent the
	// same tools, as strings are.
	Params model.Request
	// Kind is one of the Kind… constants.
	Kind string
	// Reply is what a POST /v1/messages was answered, with its defaults
	// filled in; nil for other endpoints.
	Reply *Reply
	// RequestID is the request-id header the server answered with.
	RequestID string
	// At is when the server received the request.
	At time.Time
}

// LastUserMessage returns the last message with role user, or nil.
func (r *Request) LastUserMessage() *model.Message {
	if r == nil {
		return nil
	}
	for i := len(r.Params.Messages) - 1; i >= 0; i-- {
		if r.Params.Messages[i].Role == "user" {
			return &r.Params.Messages[i]
		}
	}
	return nil
}

// ToolResults returns the tool_result blocks of the last user message.
func (r *Request) ToolResults() []model.Content {
	m := r.LastUserMessage()
	if m == nil {
		return nil
	}
	var out []model.Content
	for _, c := range m.Content {
		if c.Type == model.TypeToolResult {
			out = append(out, c)
		}
	}
	return out
}

// ToolResult returns the tool_result block for toolUseID in the last user
// message.
func (r *Request) ToolResult(toolUseID string) (model.Content, bool) {
	for _, c := range r.ToolResults() {
		if c.ToolUseID == toolUseID {
			return c, true
		}
	}
	return model.Content{}, false
}

// LastUserText returns the text blocks of the last user message, joined by
// newlines.
func (r *Request) LastUserText() string {
	m := r.LastUserMessage()
	if m == nil {
		return ""
	}
	return joinText(m.Content)
}

// SystemText returns the text of the system prompt's blocks, joined by
// newlines.
func (r *Request) SystemText() string {
	if r == nil {
		return ""
	}
	return joinText(r.Params.System)
}

// ToolNames returns the names of the declared tools, in order.
func (r *Request) ToolNames() []string {
	if r == nil {
		return nil
	}
	var names []string
	for _, t := range r.Params.Tools {
		names = append(names, t.Name)
	}
	return names
}

// HasCacheControlOnLastBlock reports whether the last block of the last
// message carries a cache_control breakpoint.
func (r *Request) HasCacheControlOnLastBlock() bool {
	if r == nil || len(r.Params.Messages) == 0 {
		return false
	}
	c := r.Params.Messages[len(r.Params.Messages)-1].Content
	return len(c) > 0 && c[len(c)-1].CacheControl != nil
}

// IsMain reports whether the request looks like an agent-loop turn rather
// than a helper ("side") call, by the rule of the reference fake API: it
// declares tools, and if any message carries a cache_control breakpoint the
// last message does too (helper calls that fork the conversation leave the
// breakpoint on an earlier message), and the last user message does not
// start with "[SUGGESTION MODE". Use it in a router, e.g.
//
//	s.SetRouter(func(r *Request) (Reply, bool) { return Text("OK"), !r.IsMain() })
func (r *Request) IsMain() bool {
	if r == nil || len(r.Params.Tools) == 0 {
		return false
	}
	msgs := r.Params.Messages
	if len(msgs) == 0 {
		return true
	}
	anyCC := false
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.CacheControl != nil {
				anyCC = true
			}
		}
	}
	if anyCC && !r.HasCacheControlOnLastBlock() {
		return false
	}
	last := msgs[len(msgs)-1]
	if last.Role == "user" && len(last.Content) > 0 && last.Content[0].Type == model.TypeText {
		if strings.HasPrefix(strings.TrimLeft(last.Content[0].Text, " \t\r\n"), "[SUGGESTION MODE") {
			return false
		}
	}
	return true
}

// Field returns the raw JSON of a top-level field of the body, such as
// "context_management", or nil if the body has no such field.
func (r *Request) Field(name string) json.RawMessage {
	if r == nil {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(r.Body, &top) != nil {
		return nil
	}
	return top[name]
}

func joinText(blocks []model.Content) string {
	var parts []string
	for _, c := range blocks {
		if c.Type == model.TypeText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decodeParams decodes a request body. It accepts the shorthand forms of the
// API (a string system prompt, string message content) by turning them into
// text blocks.
func decodeParams(body []byte) (model.Request, error) {
	var p model.Request
	err := json.Unmarshal(body, &p)
	if err == nil {
		return p, nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return model.Request{}, errors.New("request body is not a JSON object")
	}
	if s, ok := top["system"]; ok && isJSONString(s) {
		top["system"] = textBlocks(s)
	}
	if raw, ok := top["messages"]; ok {
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) == nil {
			for _, m := range msgs {
				if c, ok := m["content"]; ok && isJSONString(c) {
					m["content"] = textBlocks(c)
				}
			}
			top["messages"], _ = json.Marshal(msgs)
		}
	}
	norm, merr := json.Marshal(top)
	if merr != nil {
		return model.Request{}, err
	}
	p = model.Request{}
	if err := json.Unmarshal(norm, &p); err != nil {
		return model.Request{}, err
	}
	return p, nil
}

func isJSONString(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '"'
}

// textBlocks turns a JSON string into a JSON list of one text block.
func textBlocks(s json.RawMessage) json.RawMessage {
	var text string
	if json.Unmarshal(s, &text) != nil {
		return s
	}
	b, _ := json.Marshal([]model.Content{model.TextBlock(text)})
	return b
}

// validate checks the fields the API requires.
func validate(p *model.Request) error {
	switch {
	case p.Model == "":
		return errors.New("model: Field required")
	case p.Messages == nil:
		return errors.New("messages: Field required")
	case len(p.Messages) == 0:
		return errors.New("messages: at least one message is required")
	case p.MaxTokens < 1:
		return errors.New("max_tokens: Field required (must be at least 1)")
	}
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return errors.New("messages." + strconv.Itoa(i) + ".role: Input should be 'user' or 'assistant'")
		}
	}
	return nil
}

// betas splits the anthropic-beta header values.
func betas(h http.Header) []string {
	var out []string
	for _, v := range h.Values("anthropic-beta") {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}
