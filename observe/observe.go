// Package observe is how agentloop reports what a session does to a
// tracing or metrics system, without depending on one.
//
// An [Observer] is asked to start a [Span] at each observed step of a run:
// the run of a prompt (the session span), each turn of the loop, each model
// call, each tool call, each hook event, each compaction and each subagent.
// Spans nest through the context: the context Start returns carries the new
// span, and agentloop starts the spans of the steps inside that step from
// it, so an Observer that keeps its parent in the context (as OpenTelemetry
// does) gets a tree. The sub-package agentloop/otel is an Observer over
// OpenTelemetry; this package itself uses only the standard library.
//
// A nil Observer observes nothing, and agentloop's calls to it then cost a
// nil check: no allocation, no call.
//
// # Contents
//
// Spans carry names, counts, ids, models, durations and outcomes, never
// what the user or the model wrote, unless the Observer asks for it by
// implementing [ContentPolicy]: then the prompt's text (on the session
// span, key [AttrPrompt]) and each tool call's input and result
// ([AttrToolArguments], [AttrToolResult]) are attached as it says.
package observe

import "context"

// Observer starts spans. Start must return a non-nil Span and a non-nil
// context derived from ctx; it may be called from several goroutines at
// once (tools run concurrently).
type Observer interface {
	Start(ctx context.Context, s Start) (context.Context, Span)
}

// Span is one observed step. Its methods may be called from any goroutine,
// but agentloop calls them for one span from one goroutine at a time. End
// is called exactly once, last; err is nil for a step that succeeded.
type Span interface {
	// SetAttrs adds attributes, replacing those already set with the
	// same key.
	SetAttrs(attrs ...Attr)
	// Event records something that happened at a point in time during
	// the span (a retry, a fallback).
	Event(name string, attrs ...Attr)
	// End ends the span; err, when not nil, marks it failed.
	End(err error)
}

// Kind is what a span stands for.
type Kind int

// The kinds of span. The parent of each is given in parentheses.
const (
	// KindSession is the run of one prompt through the loop: one
	// per Query, one per prompt of a Client (the caller's span, if any).
	KindSession Kind = iota + 1
	// KindTurn is one round trip of the loop: the model call and the
	// tool calls of its reply (session or subagent).
	KindTurn
	// KindModel is one call of the model provider, retries included
	// (turn).
	KindModel
	// KindTool is one tool call, from its authorisation to its result
	// (turn).
	KindTool
	// KindHook is the dispatch of the hooks of one event (the step that
	// fired it: session, turn, tool, compaction, subagent).
	KindHook
	// KindCompaction is one compaction of the history (session or turn).
	KindCompaction
	// KindSubagent is the run of a subagent's prompt (the tool call that
	// started it). It holds turns as a session span does.
	KindSubagent
)

var kindNames = [...]string{"", "session", "turn", "model", "tool", "hook", "compaction", "subagent"}

// String returns the kind's lower-case name ("session", "tool", …).
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Start describes a span about to start.
type Start struct {
	Kind Kind
	// Name is the span's name, following the GenAI semantic conventions
	// where they name one: "invoke_agent agentloop", "chat <model>",
	// "execute_tool <tool>"; else "agentloop.turn", "agentloop.hook
	// <event>", "agentloop.compaction".
	Name  string
	Attrs []Attr
}

// Attr is one attribute. Value is a string, int64, float64, bool or
// []string; agentloop sets no other types.
type Attr struct {
	Key   string
	Value any
}

// String returns a string attribute.
func String(key, v string) Attr { return Attr{Key: key, Value: v} }

// Int returns an integer attribute.
func Int(key string, v int64) Attr { return Attr{Key: key, Value: v} }

// Float returns a floating-point attribute.
func Float(key string, v float64) Attr { return Attr{Key: key, Value: v} }

// Bool returns a boolean attribute.
func Bool(key string, v bool) Attr { return Attr{Key: key, Value: v} }

// Strings returns a string-list attribute.
func Strings(key string, v ...string) Attr { return Attr{Key: key, Value: v} }

// Content says which contents an Observer is given (see the package doc).
type Content struct {
	// UserPrompts attaches the text of each prompt to its session span.
	UserPrompts bool
	// ToolDetails attaches each tool call's input and result text to its
	// span.
	ToolDetails bool
}

// ContentPolicy is implemented by an Observer that wants contents; one
// that does not implement it gets none.
type ContentPolicy interface {
	Content() Content
}

// ContentOf returns what o asks for: the zero Content when o is nil or
// does not implement ContentPolicy.
func ContentOf(o Observer) Content {
	if p, ok := o.(ContentPolicy); ok {
		return p.Content()
	}
	return Content{}
}

// System is the value of AttrSystem.
const System = "anthropic"

// Operation names (values of AttrOperationName).
const (
	OpInvokeAgent = "invoke_agent" // session and subagent spans
	OpChat        = "chat"         // model spans
	OpExecuteTool = "execute_tool" // tool spans
)

// Attribute keys of the OpenTelemetry GenAI semantic conventions.
const (
	AttrSystem            = "gen_ai.system"         // always System
	AttrOperationName     = "gen_ai.operation.name" // OpInvokeAgent, OpChat, OpExecuteTool
	AttrRequestModel      = "gen_ai.request.model"
	AttrResponseModel     = "gen_ai.response.model"
	AttrResponseID        = "gen_ai.response.id"
	AttrFinishReasons     = "gen_ai.response.finish_reasons" // []string: the stop reason
	AttrInputTokens       = "gen_ai.usage.input_tokens"
	AttrOutputTokens      = "gen_ai.usage.output_tokens"
	AttrCacheReadTokens   = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheCreateTokens = "gen_ai.usage.cache_creation.input_tokens"
	AttrCost              = "gen_ai.usage.cost" // float64, USD at list prices
	AttrToolName          = "gen_ai.tool.name"
	AttrToolCallID        = "gen_ai.tool.call.id"
	AttrToolArguments     = "gen_ai.tool.call.arguments" // content: Content.ToolDetails only
	AttrToolResult        = "gen_ai.tool.call.result"    // content: Content.ToolDetails only
	AttrConversationID    = "gen_ai.conversation.id"     // the session id, as the conventions name it
	AttrAgentName         = "gen_ai.agent.name"          // "agentloop", or "subagent" on a subagent's span
	AttrPrompt            = "gen_ai.prompt"              // content: Content.UserPrompts only
)

// Attribute keys of agentloop.
const (
	AttrSessionID       = "agentloop.session.id"
	AttrParentToolUseID = "agentloop.parent_tool_use_id" // subagent spans: the Agent call
	AttrPromptLength    = "agentloop.prompt.length"      // characters of the prompt's text
	AttrTurn            = "agentloop.turn"               // 1-based index of the turn in its run
	AttrNumTurns        = "agentloop.num_turns"          // the result's num_turns
	AttrResultSubtype   = "agentloop.result.subtype"     // "success", "error_max_turns", …
	AttrTerminalReason  = "agentloop.result.terminal_reason"
	AttrIsError         = "agentloop.result.is_error"
	AttrTotalCost       = "agentloop.result.total_cost_usd" // the session's total, subagents included
	AttrFallbackFrom    = "agentloop.model.fallback_from"   // the model that was overloaded
	AttrToolIsError     = "agentloop.tool.is_error"
	AttrToolRan         = "agentloop.tool.ran" // false: denied, unknown, invalid input or not reached
	// AttrPermissionDecision is "allow", "deny" or "defer"; absent when
	// the call never reached authorisation (unknown tool, invalid input).
	AttrPermissionDecision = "agentloop.permission.decision"
	AttrPermissionSource   = "agentloop.permission.source"      // "config", "hook", "user", …
	AttrPermissionReason   = "agentloop.permission.reason_type" // "mode", "rule", "hook", …
	AttrHookEvent          = "agentloop.hook.event"             // "PreToolUse", "Stop", …
	AttrHookName           = "agentloop.hook.name"              // "PreToolUse:Bash"
	AttrHookCount          = "agentloop.hook.count"             // hooks that ran
	// AttrHookOutcome is "success" when every hook succeeded, else the
	// first other outcome ("error", "cancelled").
	AttrHookOutcome       = "agentloop.hook.outcome"
	AttrCompactTrigger    = "agentloop.compaction.trigger"     // "auto" or "manual"
	AttrCompactPreTokens  = "agentloop.compaction.pre_tokens"  // estimated context before
	AttrCompactPostTokens = "agentloop.compaction.post_tokens" // estimated context after
	AttrCompacted         = "agentloop.compaction.done"        // false: blocked or failed
)

// Event names and their attribute keys.
const (
	// EventRetry is a model call's failed attempt that is retried.
	EventRetry       = "agentloop.retry"
	AttrRetryAttempt = "agentloop.retry.attempt" // 1-based
	AttrRetryMax     = "agentloop.retry.max_retries"
	AttrRetryStatus  = "agentloop.retry.status" // HTTP status, 0 when none
	AttrRetryKind    = "agentloop.retry.kind"   // "overloaded", "rate_limit", …
	AttrRetryDelayMs = "agentloop.retry.delay_ms"
)
