// Package model defines how the agent loop talks to a language model.
//
// The loop builds a [Request] (system prompt, tool definitions, history) and
// hands it to a [Provider]. The provider streams the reply and reports what
// happens through a [Handler]: raw stream events, each content block as it
// completes, and each retry it schedules. When the reply is complete the
// provider returns a [Response]; when it gives up it returns an error, an
// [*APIError] when the API answered with one.
//
// The types here mirror the Anthropic Messages API wire format (their JSON is
// that format), because that is the format transcripts, hooks and the
// stream-json protocol use. Providers for other APIs translate.
//
// The package has no dependencies beyond the standard library, so a program
// can implement its own Provider without importing any SDK.
package model

import (
	"context"
	"encoding/json"
	"time"
)

// Provider sends one request to a model and streams the reply.
//
// Stream blocks until the reply is complete, the provider gives up, or ctx is
// done. Retries of transient failures happen inside Stream and are announced
// through h.Retry before each wait. Implementations must be safe for
// concurrent use: subagents share their parent's provider.
type Provider interface {
	Stream(ctx context.Context, req *Request, h Handler) (*Response, error)
}

// ToolReferencer is implemented by providers whose API loads deferred
// tools itself: tools declared with DeferLoading stay out of the model's
// prompt until a tool_result names them in [TypeToolReference] blocks
// (beta [ToolSearchBeta]). ToolReferences reports whether the provider
// does; callers check with a type assertion, and a provider without it
// gets deferred tools' definitions as text instead.
type ToolReferencer interface {
	ToolReferences() bool
}

// TokenCounter is implemented by providers that can count the input tokens
// of a request without running it (the Messages API's count_tokens
// endpoint). It is optional: callers check for it with a type assertion
// and fall back to an estimate. CountTokens counts the request's system
// prompt, tools and messages as the model would see them; it must be safe
// for concurrent use.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *Request) (int64, error)
}

// Handler receives what happens while a reply streams. Any method may be a
// no-op; [NopHandler] implements all of them. The provider calls the methods
// from the goroutine that called Stream, in stream order.
type Handler interface {
	// Event receives each raw stream event except pings, as the API sent it.
	Event(ev StreamEvent)
	// Block receives each content block when it is complete, before its
	// content_block_stop event is passed to Event. index is the block's
	// position in the reply; start describes the message so far (id, model,
	// usage from message_start).
	Block(index int, block Content, start *Response)
	// Retry is called before the provider waits to retry a failed attempt.
	Retry(r RetryInfo)
}

// NopHandler ignores everything. Embed it to implement only some methods.
type NopHandler struct{}

// Event implements Handler.
func (NopHandler) Event(StreamEvent) {}

// Block implements Handler.
func (NopHandler) Block(int, Content, *Response) {}

// Retry implements Handler.
func (NopHandler) Retry(RetryInfo) {}

// StreamEvent is one raw server-sent event of a streaming reply.
type StreamEvent struct {
	// Type is the event's type field: message_start, content_block_delta, …
	Type string
	// Data is the event's JSON object, verbatim.
	Data json.RawMessage
	// TTFT is the time from sending the request to this event; set on
	// message_start only.
	TTFT time.Duration
}

// RetryInfo describes a retry the provider is about to make.
type RetryInfo struct {
	Attempt    int           // 1 for the first retry
	MaxRetries int           // the most retries this kind of failure gets
	Delay      time.Duration // how long the provider will wait
	Status     int           // HTTP status; 0 for a connection error
	Kind       string        // server_error, overloaded, rate_limit, authentication_failed, connection_error, …
	Err        error         // the failure being retried
}

// Request is one call to the model.
type Request struct {
	Model     string    `json:"model"`
	Messages  []Message `json:"messages"`
	System    []Content `json:"system,omitempty"`
	Tools     []ToolDef `json:"tools,omitempty"`
	Metadata  *Metadata `json:"metadata,omitempty"`
	MaxTokens int       `json:"max_tokens"`
	Thinking  *Thinking `json:"thinking,omitempty"`
	// ContextManagement asks the API to edit the context on its side
	// (see [ContextManagement]); nil sends nothing.
	ContextManagement *ContextManagement `json:"context_management,omitempty"`
	Output            *OutputConfig      `json:"output_config,omitempty"`
	Stream            bool               `json:"stream"`
	// Betas are sent in the anthropic-beta header by providers that
	// support it.
	Betas []string `json:"-"`
	// Memo, when set, is the session's: the provider may keep there what
	// this request's encoding can save the next one (see [Memo]). Nil:
	// the provider keeps nothing per session.
	Memo *Memo `json:"-"`
}

// Metadata is the request's metadata object.
type Metadata struct {
	UserID string `json:"user_id,omitempty"`
}

// Thinking configures extended thinking.
type Thinking struct {
	Type         string `json:"type"` // adaptive, enabled, disabled
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"` // summarized, omitted, …
}

// OutputConfig carries the effort setting and the task budget.
type OutputConfig struct {
	Effort string `json:"effort,omitempty"`
	// TaskBudget, when set, tells the model how many tokens the whole
	// task may take (beta [TaskBudgetBeta]).
	TaskBudget *TaskBudget `json:"task_budget,omitempty"`
}

// TaskBudgetBeta is the anthropic-beta value output_config.task_budget
// needs.
const TaskBudgetBeta = "task-budgets-2026-03-13"

// TaskBudget is output_config.task_budget: a budget of Total tokens for
// the task the conversation works on; Type is "tokens".
type TaskBudget struct {
	Type  string `json:"type"`
	Total int    `json:"total"`
}

// ToolDef declares one tool to the model.
type ToolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	Type         string          `json:"type,omitempty"` // server tools, e.g. web_search_20250305
	DeferLoading bool            `json:"defer_loading,omitempty"`
	// Extra holds further fields of server tools (max_uses, allowed_domains…).
	Extra map[string]any `json:"-"`
}

// MarshalJSON merges Extra into the object.
func (t ToolDef) MarshalJSON() ([]byte, error) {
	type plain ToolDef
	b, err := json.Marshal(plain(t))
	if err != nil || len(t.Extra) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range t.Extra {
		m[k] = v
	}
	return json.Marshal(m)
}

// Message is one turn of the conversation.
type Message struct {
	Role    string    `json:"role"` // user or assistant
	Content []Content `json:"content"`
}

// CacheControl marks a prompt-cache breakpoint.
type CacheControl struct {
	Type string `json:"type"`          // ephemeral
	TTL  string `json:"ttl,omitempty"` // 5m or 1h
}

// Response is a complete reply.
type Response struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []Content `json:"content"`
	StopReason   string    `json:"stop_reason,omitempty"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        Usage     `json:"usage"`
	// StartUsage is the usage reported by message_start, before output
	// tokens were counted. The stream-json assistant lines carry it.
	StartUsage Usage `json:"-"`
	// RequestID is the request-id response header.
	RequestID string `json:"-"`
	// Duration is the time from sending the first attempt's request to
	// the end of the successful attempt, failed attempts and retry waits
	// included; TTFT the time from sending the successful attempt's request
	// to its first event.
	Duration time.Duration `json:"-"`
	TTFT     time.Duration `json:"-"`
	// FailedUsage adds up the usage of attempts whose stream failed after
	// message_start. The reference counts it in result.usage but not in
	// cost.
	FailedUsage Usage `json:"-"`
}

// HasToolUse reports whether the reply asks for any client-side tool.
func (r *Response) HasToolUse() bool {
	for _, c := range r.Content {
		if c.Type == TypeToolUse {
			return true
		}
	}
	return false
}

// Text returns the concatenated text blocks of the reply.
func (r *Response) Text() string {
	var s string
	for _, c := range r.Content {
		if c.Type == TypeText {
			s += c.Text
		}
	}
	return s
}
