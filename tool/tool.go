// Package tool defines what a tool is to the agent loop, and builds typed
// tools from Go functions.
//
// A [Tool] describes itself with [Info] (name, description, JSON schema of its
// input, whether it only reads) and runs with [Tool.Run]. The loop validates
// the model's input against the schema before Run is called, runs read-only
// tools of one reply concurrently and the others one at a time, and sends each
// [Result] back to the model.
//
// Most tools are built with [New], which infers the schema from a Go struct,
// decodes and validates the input, and recovers from panics:
//
//	type weatherIn struct {
//		City string `json:"city" jsonschema:"the city to look up"`
//	}
//	weather := tool.New("weather", "Current weather for a city.",
//		func(ctx context.Context, in weatherIn, call *tool.Call) (tool.Result, error) {
//			return tool.Text("sunny in " + in.City), nil
//		}, &tool.Options{ReadOnly: true})
//
// # Two tiers of errors
//
// A tool's own failure (file not found, command failed) is information for
// the model: return a Result with IsError set, or a non-nil error, and the
// loop sends the text back as an is_error tool result. The run goes on.
// Failures of the loop itself (the API is down, the context is cancelled) are
// reported to the caller of the loop, never to the model.
package tool

import (
	"context"
	"encoding/json"

	"github.com/agentloop/agentloop/model"
)

// Tool is something the model can call. Implementations must be safe for
// concurrent use when Info().ReadOnly is true.
type Tool interface {
	// Info describes the tool. It is called once per run; the result must
	// not change while a run uses the tool.
	Info() Info
	// Run executes one call. The input has been validated against
	// Info().InputSchema. A returned error is sent to the model as an
	// is_error result with the error's text; it does not end the run.
	// Run must return promptly when ctx is done.
	Run(ctx context.Context, call *Call) (Result, error)
}

// Info describes a tool to the model and to the loop.
type Info struct {
	// Name is the tool's name as the model calls it.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// InputSchema is a JSON Schema (draft 2020-12) of the input object.
	InputSchema json.RawMessage
	// ReadOnly tools change nothing, so calls of one reply may run
	// concurrently, and a call is allowed without asking unless a deny
	// or ask rule or a hook stops it (see Options.ReadOnly).
	ReadOnly bool
	// AlwaysReportError makes a successful result carry an explicit
	// "is_error": false, as the reference's Bash tool does.
	AlwaysReportError bool
	// MaxResultChars is the longest result, in characters of text, that
	// the model gets inline. A longer one is saved to a file in
	// Env.ResultsDir and the model gets a preview and the file's path.
	// Zero means DefaultMaxResultChars; values above MaxResultCharsCeiling
	// count as the ceiling; a negative value keeps results inline
	// whatever their size.
	MaxResultChars int
	// Defer makes the tool deferrable: while tool search is on, its
	// definition is not declared to the model up front. The model sees
	// its name, loads it with the ToolSearch tool, and it is declared from
	// the next request on. A deferred tool still runs when the model
	// calls it without loading it first.
	Defer bool
	// MCP marks a tool that comes from an MCP server (package mcp sets it
	// on the tools it builds, named mcp__<server>__<tool>). MCP tools are
	// deferrable by default, as if Defer were set.
	MCP bool
	// AlwaysLoad keeps a tool declared up front even when Defer or MCP
	// would defer it (an MCP server's alwaysLoad setting).
	AlwaysLoad bool
	// SearchHint is a short phrase that helps the model find a deferred
	// tool (an MCP tool's _meta "anthropic/searchHint"): it is shown
	// beside the tool's name in the list of deferred tools, and ToolSearch
	// keyword queries match it. Empty means none.
	SearchHint string
	// RequiresUserInteraction marks a tool that needs a person every
	// time (an MCP tool's _meta "anthropic/requiresUserInteraction"):
	// each call goes to the CanUseTool callback, whatever the allow rules,
	// the mode or a PreToolUse hook's allow say; in dontAsk mode, and with
	// no callback, it is denied.
	RequiresUserInteraction bool
	// PermissionPolicy is the tool's per-server policy (an MCP server
	// configuration's "tools" list): MCPAlwaysAllow, MCPAlwaysAsk or
	// MCPAlwaysDeny; empty means none. The session's permission check
	// applies it (see MCPToolPolicy).
	PermissionPolicy string
}

// Deferrable reports whether tool search may withhold the tool's
// definition: Defer or MCP is set and AlwaysLoad is not.
func (i Info) Deferrable() bool { return (i.Defer || i.MCP) && !i.AlwaysLoad }

// Result size limits (see Info.MaxResultChars).
const (
	// DefaultMaxResultChars is the inline limit of a tool that sets none,
	// the reference's Bash threshold.
	DefaultMaxResultChars = 30_000
	// MaxResultCharsCeiling is the highest inline limit a tool can ask
	// for, as the reference's anthropic/maxResultSizeChars ceiling.
	MaxResultCharsCeiling = 500_000
)

// Call is one invocation of a tool.
type Call struct {
	// ID is the tool_use id the model gave the call.
	ID string
	// Input is the call's input object as the model sent it, with schema
	// defaults applied.
	Input json.RawMessage
	// Env is the session the call runs in. It is shared by all calls of
	// the session: treat it as read-only.
	Env *Env
}

// Env is what a tool may know about the session it runs in.
type Env struct {
	// Cwd is the session's working directory, absolute.
	Cwd string
	// AdditionalDirs are further directories the session may work in.
	AdditionalDirs []string
	// SessionID identifies the session.
	SessionID string
	// Home is the directory for per-user state (default: the user's home).
	Home string
	// Provider and Model let a tool ask the session's model a question
	// (WebFetch summarises pages this way). Either may be nil.
	Provider model.Provider
	Model    string
	// AskUser reaches the person behind the session, for the
	// AskUserQuestion tool. Nil means nobody is available to ask.
	AskUser AskUserFunc
	// State holds per-session state that tools share, keyed by the
	// tool package's own key types. Safe for concurrent use.
	State *State
	// Environ is the environment of the processes tools start (Bash
	// commands, background shells), in os.Environ form. Nil means the
	// host process's environment. The session builds it from the process
	// environment less agentloop's own API credentials, plus the settings'
	// env and Options.Env.
	Environ []string
	// ReadDenied, when set, reports whether the session's deny rules
	// forbid the tool (Read, Grep, Glob) to read a file or directory known
	// by any of the given names: absolute, clean paths, each matched as it
	// is (no link is followed; the caller passes the physical form too
	// when it differs). Grep and Glob leave out what it denies while they
	// walk, without descending into denied directories, and Read refuses
	// it. Nil denies nothing. It must be safe for concurrent use.
	ReadDenied func(tool string, names ...string) bool
	// CheckedPath, when set, returns the physical path that the permission
	// check resolved for the file a call (by tool_use id) works on, when
	// one was resolved. The file tools then work on exactly that path and
	// open it without following symbolic links, so that a link swapped in
	// after the check makes the call fail rather than reach another file.
	// It must be safe for concurrent use.
	CheckedPath func(callID string) (string, bool)
	// ResultsDir, when set, is where the loop saves tool results too long
	// to send inline (see Info.MaxResultChars), one file per call; the
	// session lets Read read it. Tools may then return longer output than
	// they would otherwise (Bash does), knowing the loop bounds what the
	// model sees. Empty: results are sent as the tools return them.
	ResultsDir string
	// BeforeFileChange, when set, is called by the tools that change files
	// (Write, Edit, NotebookEdit) with the physical path they will open
	// (see CheckedPath), before they change the file, so that the session
	// can save the file's prior state (file checkpointing). A non-nil
	// error makes the tool refuse the change. It must be safe for
	// concurrent use.
	BeforeFileChange func(path string) error
	// Host, when set, is where the built-in tools reach text files and
	// run foreground commands instead of the local machine (an editor's
	// buffers and terminal); see [Host]. Nil means the local machine.
	Host *Host
}

// Result is what a call returns to the model.
type Result struct {
	// Content is what the model sees. A single text block is sent as a
	// plain string.
	Content []model.Content
	// IsError marks the result as a failure.
	IsError bool
	// Structured is the tool's structured output, reported to the host as
	// tool_use_result and never sent to the model. Nil means none.
	Structured any
	// ListContent sends the content as a list of blocks even when it is a
	// single text block.
	ListContent bool
	// FollowUp is content for the model that comes after the reply's tool
	// results, in the same user turn, instead of inside this result: the
	// Skill tool's instructions, as the reference sends them. The stream
	// shows it as a synthetic user message of its own.
	FollowUp []model.Content
}

// Text returns a successful result holding one text block.
//
// Text and Error are not inlined: inlined, each call would build its
// 240-byte block in its caller's frame, and a tool that answers in many
// places (Read has a dozen) would take kilobytes of stack for them in every
// goroutine that runs it.
//
//go:noinline
func Text(s string) Result {
	return Result{Content: []model.Content{model.TextBlock(s)}}
}

// Error returns a failed result holding one text block. See Text.
//
//go:noinline
func Error(s string) Result {
	return Result{Content: []model.Content{model.TextBlock(s)}, IsError: true}
}

// Text returns the result's text blocks joined by newlines.
func (r Result) Text() string {
	s := ""
	for i, c := range r.Content {
		if c.Type != model.TypeText {
			continue
		}
		if i > 0 {
			s += "\n"
		}
		s += c.Text
	}
	return s
}
