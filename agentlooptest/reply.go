package agentlooptest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentloop/agentloop/model"
)

// Values of [Reply.DeltaUsage].
const (
	// DeltaUsageFull makes the message_delta event carry the whole usage
	// object (input, output and cache tokens). It is the default.
	DeltaUsageFull = "full"
	// DeltaUsageOutputOnly makes the message_delta event carry only
	// output_tokens, as some API versions do.
	DeltaUsageOutputOnly = "output_only"
)

// DefaultChunk is the number of characters per delta event when
// [Reply.Chunk] is zero.
const DefaultChunk = 40

// Reply scripts one answer of the fake API.
//
// The zero value of every field means its default. A Reply is a plain value:
// the server copies it when it answers, so a script may reuse one Reply for
// several answers. The server fills in the defaults of the copy it records in
// [Request.Reply] (ID, Model, StopReason, Usage, tool_use IDs, thinking
// signatures, Chunk, DeltaUsage, error type and message).
//
// What is answered, in order of precedence: after Delay, a non-zero Status
// answers an HTTP error; else a non-empty RawSSE is written verbatim; else a
// streaming request (stream: true) gets the server-sent event stream of the
// message, cut by StreamError or CutAfter if set; else the message is answered
// as one JSON object.
type Reply struct {
	// Content is the message's content blocks: text, tool_use (Input is the
	// tool input JSON), thinking (Thinking and Signature),
	// redacted_thinking (Data), server_tool_use (ID, Name, Input) and blocks
	// of other types such as web_search_tool_result (Raw). See Blocks and the
	// *Block helpers.
	Content []model.Content
	// StopReason defaults to "tool_use" if Content has a tool_use block and
	// to "end_turn" otherwise.
	StopReason string
	// StopSequence is the stop sequence that ended the message, sent as
	// stop_sequence (null when empty); use it with StopReason
	// "stop_sequence".
	StopSequence string
	// Usage is the reply's usage. The zero Usage means {input_tokens: 10,
	// output_tokens: 5}. message_start carries it with output_tokens at most
	// 1; message_delta carries it as DeltaUsage says.
	Usage model.Usage
	// Model defaults to the request's model ("claude-fake" if it has none).
	Model string
	// ID is the message ID; it defaults to "msg_fake_" and random hex.
	ID string
	// DeltaUsage is DeltaUsageFull (the default) or DeltaUsageOutputOnly.
	DeltaUsage string
	// Chunk is the most characters (runes) of text, thinking or tool input
	// JSON per delta event; 0 means DefaultChunk.
	Chunk int
	// Delay is how long the server waits before it answers anything,
	// including an error. The wait ends early if the client goes away or the
	// server closes.
	Delay time.Duration
	// EventDelay is how long the server waits between two events of a
	// stream.
	EventDelay time.Duration

	// Status, when not 0, makes the reply an HTTP error with this status and
	// the body {"type":"error","error":{"type":ErrorType,
	// "message":ErrorMessage},"request_id":…}.
	Status int
	// ErrorType defaults to the API's type for Status (overloaded_error for
	// 529, rate_limit_error for 429, api_error for 500, …).
	ErrorType string
	// ErrorMessage defaults to a short message for ErrorType.
	ErrorMessage string
	// Header holds extra response headers (for example "retry-after"). They
	// are sent with any answer and override the server's own headers.
	Header map[string]string
	// StreamError makes a streaming answer fail: the server sends
	// message_start, then (if Content is not empty) a ping and the complete
	// content blocks, then an SSE error event, and ends the stream. A
	// non-streaming request gets the matching HTTP error instead.
	StreamError *StreamError
	// RawSSE, when not empty, is written verbatim as the body of a 200
	// answer with content-type text/event-stream, whatever the request's
	// stream flag. Use it for malformed streams.
	RawSSE string
	// CutAfter, when positive, makes the server close the connection
	// abruptly after this many events of a stream (the ping counts), without
	// ending the HTTP response properly: the client sees an unexpected EOF.
	CutAfter int
	// StallAfter, when positive, makes the server stop sending after this
	// many events of a stream (the ping counts) without ending it: the
	// connection stays open and silent until the client goes away or the
	// server closes. Use it to test a client's idle timeout. CutAfter, if
	// also set and not larger, wins.
	StallAfter int

	// Expect, if set, is called with the request this reply answers, after
	// it has been recorded and before the answer is sent. A non-nil error or
	// a panic is recorded in [Server.Mismatches]; the reply is still sent.
	// Expect may be called concurrently with other requests' callbacks.
	Expect func(*Request) error
}

// StreamError is an error event sent in the middle of a stream.
type StreamError struct {
	Type    string // e.g. overloaded_error; the default
	Message string // defaults to a short message for Type
}

// Text returns a reply with one text block.
func Text(s string) Reply { return Blocks(model.TextBlock(s)) }

// ToolUse returns a reply with one tool_use block; see [ToolUseBlock] for
// id and input. Its stop reason defaults to "tool_use". For parallel calls, or
// text before the call, use [Blocks] with several blocks.
func ToolUse(id, name string, input any) Reply { return Blocks(ToolUseBlock(id, name, input)) }

// Thinking returns then with a thinking block (and a generated signature)
// put before its content, e.g. Thinking("Let me look.", ToolUse(…)).
func Thinking(thinking string, then Reply) Reply {
	then.Content = append([]model.Content{ThinkingBlock(thinking, "")}, then.Content...)
	return then
}

// Blocks returns a reply with the given content blocks.
func Blocks(content ...model.Content) Reply {
	return Reply{Content: slices.Clone(content)}
}

// Error returns a reply that answers the HTTP status with an error body of
// type typ and message msg; empty typ and msg mean the defaults for status.
func Error(status int, typ, msg string) Reply {
	return Reply{Status: status, ErrorType: typ, ErrorMessage: msg}
}

// Overloaded returns a 529 overloaded_error reply.
func Overloaded() Reply { return Error(529, "overloaded_error", "Overloaded") }

// ServerError returns a 500 api_error reply.
func ServerError() Reply { return Error(500, "api_error", "Internal server error") }

// RateLimited returns a 429 rate_limit_error reply. Set its Header for a
// retry-after header.
func RateLimited() Reply { return Error(429, "rate_limit_error", "Rate limited") }

// ErrorEvent returns a reply whose stream fails after message_start with an
// error event of type typ and message msg; see [Reply.StreamError].
func ErrorEvent(typ, msg string) Reply {
	return Reply{StreamError: &StreamError{Type: typ, Message: msg}}
}

// ToolUseBlock returns a tool_use block. An empty id is replaced by a
// generated "toolu_fake_…" ID when the block is sent. input is the tool
// input: a string, []byte or json.RawMessage is taken as JSON text, verbatim
// (so a stream can carry malformed JSON); nil means {}; anything else is
// marshalled with encoding/json. ToolUseBlock panics if that fails.
func ToolUseBlock(id, name string, input any) model.Content {
	return model.Content{Type: model.TypeToolUse, ID: id, Name: name, Input: inputJSON(input)}
}

// ServerToolUseBlock returns a server_tool_use block (e.g. name
// "web_search"); id and input are as for [ToolUseBlock], with generated IDs
// "srvtoolu_fake_…".
func ServerToolUseBlock(id, name string, input any) model.Content {
	return model.Content{Type: model.TypeServerToolUse, ID: id, Name: name, Input: inputJSON(input)}
}

// ThinkingBlock returns a thinking block. An empty signature is replaced by
// a generated "fakesig_…" one when the block is sent.
func ThinkingBlock(thinking, signature string) model.Content {
	return model.Content{Type: model.TypeThinking, Thinking: thinking, Signature: signature}
}

// RedactedThinkingBlock returns a redacted_thinking block.
func RedactedThinkingBlock(data string) model.Content {
	return model.Content{Type: model.TypeRedactedThinking, Data: data}
}

// RawBlock returns the block whose JSON is js, for example a
// web_search_tool_result block. It panics if js is not a valid block.
func RawBlock(js string) model.Content {
	var c model.Content
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		panic(fmt.Sprintf("agentlooptest.RawBlock: %v", err))
	}
	return c
}

func inputJSON(input any) json.RawMessage {
	switch v := input.(type) {
	case nil:
		return json.RawMessage("{}")
	case string:
		return json.RawMessage(v)
	case []byte:
		return slices.Clone(json.RawMessage(v))
	case json.RawMessage:
		return slices.Clone(v)
	}
	b, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("agentlooptest: tool input: %v", err))
	}
	return b
}

// defaultUsage is the usage of a reply whose Usage is zero.
var defaultUsage = model.Usage{InputTokens: 10, OutputTokens: 5}

// resolve returns a copy of r with its defaults filled in, for a request of
// model reqModel.
func (r Reply) resolve(reqModel string) Reply {
	out := r
	out.Content = slices.Clone(r.Content)
	out.Header = maps.Clone(r.Header)
	if r.StreamError != nil {
		se := *r.StreamError
		if se.Type == "" {
			se.Type = "overloaded_error"
		}
		if se.Message == "" {
			se.Message = defaultErrorMessage(se.Type)
		}
		out.StreamError = &se
	}
	if out.Status != 0 {
		if out.ErrorType == "" {
			out.ErrorType = model.ErrorTypeForStatus(out.Status)
		}
		if out.ErrorMessage == "" {
			out.ErrorMessage = defaultErrorMessage(out.ErrorType)
		}
		return out
	}
	if out.RawSSE != "" {
		return out
	}
	if out.ID == "" {
		out.ID = randomID("msg_fake_")
	}
	if out.Model == "" {
		out.Model = reqModel
	}
	if out.Model == "" {
		out.Model = "claude-fake"
	}
	hasToolUse := false
	for i := range out.Content {
		c := &out.Content[i]
		switch c.Type {
		case model.TypeToolUse:
			hasToolUse = true
			if c.ID == "" {
				c.ID = randomID("toolu_fake_")
			}
		case model.TypeServerToolUse:
			if c.ID == "" {
				c.ID = randomID("srvtoolu_fake_")
			}
		case model.TypeThinking:
			if c.Signature == "" {
				c.Signature = randomID("fakesig_")
			}
		}
	}
	if out.StopReason == "" {
		out.StopReason = "end_turn"
		if hasToolUse {
			out.StopReason = "tool_use"
		}
	}
	if out.Usage == (model.Usage{}) {
		out.Usage = defaultUsage
	}
	if out.Chunk <= 0 {
		out.Chunk = DefaultChunk
	}
	if out.DeltaUsage != DeltaUsageOutputOnly {
		out.DeltaUsage = DeltaUsageFull
	}
	return out
}

// statusForErrorType is the HTTP status the API uses for an error type.
func statusForErrorType(typ string) int {
	switch typ {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "billing_error":
		return 402
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "timeout_error":
		return 504
	case "overloaded_error":
		return 529
	}
	return 500
}

func defaultErrorMessage(typ string) string {
	switch typ {
	case "overloaded_error":
		return "Overloaded"
	case "api_error":
		return "Internal server error"
	case "rate_limit_error":
		return "Rate limited"
	case "authentication_error":
		return "invalid x-api-key"
	case "permission_error":
		return "Permission denied"
	case "not_found_error":
		return "Not found"
	case "request_too_large":
		return "Request exceeds the maximum allowed number of bytes."
	case "billing_error":
		return "Your credit balance is too low to access the Anthropic API."
	case "timeout_error":
		return "Request timed out"
	}
	return typ
}

// randomID returns prefix followed by 20 random hex digits.
func randomID(prefix string) string {
	var b [10]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return prefix + hex.EncodeToString(b[:])
}
