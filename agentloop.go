// Package agentloop runs the agent loop of Claude Code in your Go program:
// a model that reads files, runs commands and edits code through tools, in a
// loop, until the task is done.
//
// # A first agent
//
// [Query] sends a prompt and returns a [Stream] of messages. Range over it:
//
//	for msg, err := range agentloop.Query(ctx, "What does main.go do?", nil) {
//		if err != nil {
//			log.Fatal(err)
//		}
//		switch m := msg.(type) {
//		case *agentloop.AssistantMessage:
//			fmt.Print(m.Message.Text())
//		case *agentloop.ResultMessage:
//			fmt.Printf("\n%d turns, $%.4f\n", m.NumTurns, m.TotalCostUSD)
//		}
//	}
//
// Breaking out of the loop cancels the run: the model call in flight is
// abandoned and running tools see their context cancelled.
//
// The stream starts with a [SystemMessage] of subtype init, then one
// [AssistantMessage] per content block the model produces, one [UserMessage]
// per tool result, and ends with one [ResultMessage]. With
// Options.IncludePartialMessages it also carries [StreamEventMessage]s, the
// raw events of each reply as they arrive.
//
// A caller that only wants the answer uses [Stream.Result]:
//
//	res, err := agentloop.Query(ctx, "Summarise README.md", nil).Result()
//
// # Errors
//
// A run that ends in an error result (max turns, budget, an API failure that
// outlived its retries) yields that [ResultMessage] and then a non-nil error,
// a [*ResultError] wrapping it. This is the Go form of the official SDKs
// raising after the error result; errors.Is(err, [ErrMaxTurns]) (or
// [ErrMaxBudget], [ErrMaxStructuredOutputRetries], [ErrDuringExecution],
// [ErrAPIError]) tells which. Errors that prevent a run from starting at
// all (no credentials, a bad option) are yielded alone; a bad option is
// [ErrInvalidOption], wrapping its cause ([ErrUnknownValue] for a value
// outside a vocabulary, which the Parse functions such as
// [ParsePermissionMode] check).
//
// A tool's failure is not an error of the run: the model is told, in an
// is_error tool result, and decides what to do next.
//
// # Conversations and sessions
//
// A [Client] keeps a conversation across prompts, and its settings (model,
// thinking budget, effort) can change between or during them. Every run is
// written to a transcript in the reference CLI's layout; Options.Resume,
// Options.Continue and Options.ForkSession pick a stored session up again.
//
// # Structured output
//
// Options.OutputFormat makes the run end with a JSON value that matches a
// schema; [OutputFormatFor] infers the schema from a Go struct and
// [StructuredOutput] decodes the result:
//
//	type verdict struct {
//		Safe   bool   `json:"safe"`
//		Reason string `json:"reason"`
//	}
//	format, _ := agentloop.OutputFormatFor[verdict]()
//	res, err := agentloop.Query(ctx, "Is this diff safe to merge?", &agentloop.Options{OutputFormat: format}).Result()
//	v, err := agentloop.StructuredOutput[verdict](res)
//
// # Permissions and hooks
//
// Calls that change state need permission: [PermissionMode], allow and deny
// rules (Options.AllowedTools, settings files) such as "Bash(go test:*)",
// checked against a real parse of the command, and Options.CanUseTool for
// what the rules leave open. Options.Hooks registers Go callbacks (package
// hooks) on the loop's events, alongside command hooks from settings files.
//
// # Models
//
// By default the loop talks to the Anthropic Messages API, with credentials
// from ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN and the endpoint from
// ANTHROPIC_BASE_URL. Options.Provider plugs in anything else that
// implements [model.Provider]; package agentlooptest provides a scripted fake
// of the Messages API for tests.
//
// # Tools
//
// The built-in tools (package tools) read, write and edit files, search them,
// and run shell commands in Options.Cwd. [NewTool] turns a Go function into a
// tool, with its input schema inferred from a struct. Calls that change state
// need permission (below). Subagents, defined in Options.Agents, take
// delegated tasks through the Agent tool.
package agentloop

import (
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/tool"
)

// Version is agentloop's version.
const Version = conversation.Version

// Message is one item of a run's stream; see package message for the JSON
// format. The concrete types are listed below.
type Message = message.Message

// The messages of a stream.
type (
	// SystemMessage is a system line: init first, then retries,
	// permission denials and status notices.
	SystemMessage = message.System
	// AssistantMessage carries one content block of a model reply.
	AssistantMessage = message.Assistant
	// UserMessage carries one tool result, or a synthetic prompt.
	UserMessage = message.User
	// StreamEventMessage is a raw event of a reply in progress.
	StreamEventMessage = message.StreamEvent
	// ResultMessage is the last message of a run.
	ResultMessage = message.Result
	// ConversationResetMessage starts a new conversation, with a new
	// session id, in the same stream (after /clear).
	ConversationResetMessage = message.ConversationReset
	// ResultError is the error yielded after an error result; errors.Is
	// matches it against ErrMaxTurns, ErrMaxBudget and the other result
	// sentinels.
	ResultError = message.ResultError
)

// The sentinels of error results: errors.Is(err, ErrMaxTurns) on the error
// yielded after a [ResultMessage] tells why the run ended. A result can
// match two: an API failure reported as error_during_execution is both
// ErrDuringExecution and ErrAPIError.
var (
	// ErrMaxTurns: the run reached Options.MaxTurns (error_max_turns).
	ErrMaxTurns = message.ErrMaxTurns
	// ErrMaxBudget: the run's cost reached Options.MaxBudgetUSD
	// (error_max_budget_usd).
	ErrMaxBudget = message.ErrMaxBudget
	// ErrMaxStructuredOutputRetries: the model failed to produce output
	// matching Options.OutputFormat too often
	// (error_max_structured_output_retries).
	ErrMaxStructuredOutputRetries = message.ErrMaxStructuredOutputRetries
	// ErrDuringExecution: the run failed or was stopped along the way
	// (error_during_execution).
	ErrDuringExecution = message.ErrDuringExecution
	// ErrAPIError: the run ended on a model API error that outlived its
	// retries (terminal_reason api_error), whichever the subtype.
	ErrAPIError = message.ErrAPIError
)

// Tool is something the model can call; see package tool.
type Tool = tool.Tool

// ToolResult is what a tool returns to the model.
type ToolResult = tool.Result

// ToolCall is one invocation of a tool.
type ToolCall = tool.Call

// ToolOptions configure a tool built with NewTool. ReadOnly is a
// permission decision too: a read-only tool's calls run without
// CanUseTool being asked, unless a deny or ask rule or a hook stops them.
type ToolOptions = tool.Options

// NewTool returns a tool named name whose input is decoded into In, with the
// input schema inferred from In. The loop validates the model's input
// against the schema before fn runs; invalid input is returned to the model
// as an error it can correct. A panic in fn becomes an error result. See
// [tool.New].
func NewTool[In any](name, description string, fn tool.Func[In], opts *ToolOptions) Tool {
	return tool.New(name, description, fn, opts)
}

// DecodeMessage reads one stream-json line into a Message.
func DecodeMessage(line []byte) (Message, error) { return message.Decode(line) }

// TextResult returns a successful tool result holding one text block.
func TextResult(s string) ToolResult { return tool.Text(s) }

// ErrorResult returns a failed tool result holding one text block; the
// model sees it as an is_error tool result.
func ErrorResult(s string) ToolResult { return tool.Error(s) }
