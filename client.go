package agentloop

import (
	"context"
	"sync"

	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/model"
)

// Client is a conversation of several prompts: each Query continues the
// history of the ones before it, and the session's cost and per-model usage
// accumulate across them. Settings such as the model may change between or
// during queries.
//
// A Client runs one query at a time; a Query started while another is
// being consumed yields ErrBusy. Streaming input (Send, Messages,
// Interrupt) is the other way to converse: messages queue and run as turns
// one after another. Its methods are safe for concurrent use.
//
// Close it to stop a running query and what its tools left running; after
// Close, every method that can fail returns ErrClosed.
type Client struct {
	c *conversation.Client
}

// clientConfigs recycles the configurations NewClient converts options
// into (conversation.NewClient copies what it keeps), ~900 bytes of
// garbage a Client less.
var clientConfigs = sync.Pool{New: func() any { return new(conversation.Config) }}

// NewClient starts a conversation with opts (nil means defaults). It checks
// the options and credentials at once; no model call is made until Query.
// It creates no file and holds no descriptor: the transcript is created,
// and its lock taken, by the first turn, and the lock is held only while a
// turn runs (another process may resume the session in between).
func NewClient(opts *Options) (*Client, error) {
	var cfg *conversation.Config
	if opts != nil {
		// The session copies the configuration: this one is recycled.
		cfg = clientConfigs.Get().(*conversation.Config)
		defer func() {
			*cfg = conversation.Config{}
			clientConfigs.Put(cfg)
		}()
		opts.wire(cfg)
	}
	c, err := conversation.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// SessionID returns the conversation's session id. A "/clear" prompt
// starts a new conversation with a new id (announced in its stream by a
// ConversationResetMessage); from then on SessionID returns that one.
func (c *Client) SessionID() string {
	return c.c.SessionID()
}

// Query sends the next prompt and returns the stream of its messages, which
// starts with system/init and ends with this prompt's result. The stream
// runs once; see Stream. On a closed client the stream yields only
// ErrClosed; a query that Close cancels ends with an error wrapping both
// context.Canceled and ErrClosed.
func (c *Client) Query(ctx context.Context, prompt string) Stream {
	return Stream(c.c.Query(ctx, prompt))
}

// QueryContent is Query for a prompt of content blocks: text, image and
// document blocks (with a base64, url or text source), as a UserInput's
// Content. A prompt that is one text block may be a slash command, as
// with Query. Blocks of another type, or none, make the stream yield an
// error wrapping ErrInvalidInput that names the block.
func (c *Client) QueryContent(ctx context.Context, content []model.Content) Stream {
	return Stream(c.c.QueryContent(ctx, content))
}

// SetModel switches the model (an id or alias) from the next request on,
// also in the middle of a running query. An empty or blank name is an
// ErrInvalidOption. It returns ErrClosed after Close.
func (c *Client) SetModel(name string) error {
	return c.c.SetModel(name)
}

// Model returns the current model id.
func (c *Client) Model() string {
	return c.c.Model()
}

// Effort returns the current effort ("" for the API's default).
func (c *Client) Effort() string {
	return c.c.Effort()
}

// SetMaxThinkingTokens sets thinking to enabled with this budget from the
// next request on; 0 restores the model's default (adaptive where
// supported). The budget must be at least 1024 tokens.
func (c *Client) SetMaxThinkingTokens(n int) error {
	return c.c.SetMaxThinkingTokens(n)
}

// SetEffort changes the effort (low, medium, high, xhigh, max; empty for
// the API's default) from the next request on.
func (c *Client) SetEffort(e string) error {
	return c.c.SetEffort(e)
}

// Close ends the conversation. A running query is cancelled (its stream
// ends with an error wrapping ErrClosed) and Close waits, at most
// CloseTimeout, for it to stop; then the session ends: SessionEnd hooks
// run, background shells are stopped and the transcript is closed. The
// cleanup never runs while the query still works: if the query does not
// stop in time, Close returns ErrCloseTimeout and the cleanup runs when it
// stops. Called from the loop body of the running query's own stream, Close
// cannot wait for it; it cancels the query, which cleans up as it returns.
//
// Messages sent with Send that are still queued never run: Close returns
// a *DroppedInputError naming them (with ErrCloseTimeout, if both).
//
// Close is safe to call from any goroutine and more than once; calls after
// the first return nil at once.
func (c *Client) Close() error {
	return c.c.Close()
}

// Idle reports whether the streaming input of Messages has nothing left
// to do: no message sent with Send waits in the queue and no turn is
// running. A host that has stopped sending (the stream-json driver after
// stdin ends) waits for Idle before it ends the stream, so that every
// queued message runs. It is safe for concurrent use.
func (c *Client) Idle() bool {
	return c.c.Idle()
}

// Send queues a user message for the conversation and returns its uuid.
// It does not wait: the message runs when its turn in the queue comes
// while Messages is being consumed. Within a priority, messages run in the
// order they were sent; PriorityNow also interrupts the running turn (see
// Interrupt).
//
// A message sent while a turn runs may fold into that turn: between tool
// rounds (after a reply's tool results, before the next request) the turn
// takes, from the head of the queue, up to 64 messages of PriorityNext
// that ask for a model call and are not slash commands, stopping at the
// first other one so the queue's order holds. A folded message goes
// through UserPromptSubmit, joins the history after the tool results, is
// written to the transcript and yielded on the stream as a UserMessage
// with its uuid (that is how a host sees it was taken: Withdraw no longer
// finds it), and the next reply's AssistantMessages name it in
// UserMessageUUIDs; the turn goes on, with one result, and its turn count
// (MaxTurns) is not restarted. Messages that could fold but were sent
// while the model answered its last round run together, as the reference
// runs them, in one turn after the running turn's result: their texts
// joined by a newline into one prompt under the first one's uuid. Every
// other message (PriorityNow, PriorityLater, ShouldQuery false, a
// "/command", one sent while no turn ran) runs as a turn of its own.
//
// Send returns an error wrapping ErrInvalidInput for an unknown priority
// (naming it), a message with nothing to send, a block of a type other
// than text, image or document, or a uuid already queued; ErrClosed after
// Close. It is safe for concurrent use.
func (c *Client) Send(in UserInput) (string, error) {
	return c.c.Send(conversation.UserInput(in))
}

// Withdraw removes a queued message that has not started (the
// reference's cancel_async_message) and reports whether it was queued:
// false once the message runs or has folded into a running turn.
func (c *Client) Withdraw(id string) bool {
	return c.c.Withdraw(id)
}

// Queued returns the uuids of the messages waiting in the queue, in the
// order they will run.
func (c *Client) Queued() []string {
	return c.c.Queued()
}

// Messages returns the stream of the conversation's streaming input: it
// takes the messages Send queued one at a time and yields every message
// of each turn (system/init, assistant and user messages, the turn's
// result) in order, across turns; while the queue is empty it waits for
// the next Send. Turns run only while the stream is consumed. Messages
// sent while a turn runs may fold into it (see Send): the stream then
// yields them as UserMessages in that turn. Each turn
// is what a Query of that message would be, except for the budget: the
// turn count starts afresh with every message, but the budget
// (MaxBudgetUSD) counts every turn since the first Messages turn, or since
// the last "/clear" (from then on, for the client's later Query calls
// too), and a turn that ends in an error result leaves the conversation
// usable for the next message. A message
// with ShouldQuery false joins the history in its place in the queue and
// yields nothing.
//
// Unlike Query's stream, an error result is not followed by an error:
// the result message says it (IsError, Subtype). An error value (say, a
// message the conversation could not take) does not end the stream;
// consumers may go on ranging. The stream ends when ctx ends (a running
// turn is cancelled and yields its error result), when the loop body
// breaks (likewise), or at Close; messages still queued then stay queued
// for the next Messages call, or, at Close, are reported by Close.
//
// While the stream is open, Query and another Messages yield ErrBusy, as
// Messages does while a Query runs. On a closed client it yields only
// ErrClosed. The stream runs once; see Stream (its Result and Collect
// wait for the stream's end, so range over it instead).
func (c *Client) Messages(ctx context.Context) Stream {
	return Stream(c.c.Messages(ctx))
}

// Interrupt ends the running turn of Messages, as the reference's
// interrupt does: the turn stops where it is (a request is abandoned, a
// running tool is cancelled and every tool call of the turn gets a
// result, so the history stays valid) and ends with an error result
// (error_during_execution, terminal reason aborted_streaming or, during
// tools, aborted_tools), and the next queued message runs after it. With
// opts.CancelQueued the queued messages are removed too.
//
// Interrupt waits, while ctx allows, until the turn's result is out;
// called from the loop body of Messages it cannot, and returns at once.
// With no turn running it does nothing and returns an empty result. It
// returns ErrClosed after Close.
func (c *Client) Interrupt(ctx context.Context, opts *InterruptOptions) (InterruptResult, error) {
	var o *conversation.InterruptOptions
	if opts != nil {
		o = &conversation.InterruptOptions{CancelQueued: opts.CancelQueued}
	}
	res, err := c.c.Interrupt(ctx, o)
	return InterruptResult(res), err
}

// SetPermissionMode switches the permission mode (see PermissionModes;
// "manual" is taken for PermissionDefault) from the next tool decision on,
// also in the middle of a running turn. An unknown mode is an error
// wrapping ErrInvalidOption; a mode the session may not enter (bypass
// permissions when the session did not start with it allowed, a mode a
// settings file turned off: ErrPermissionModeDisabled) is an error and
// changes nothing. It returns ErrClosed after Close.
func (c *Client) SetPermissionMode(mode PermissionMode) error {
	return c.c.SetPermissionMode(mode)
}

// PermissionMode returns the permission mode in force.
func (c *Client) PermissionMode() PermissionMode {
	return c.c.PermissionMode()
}

// SupportedModels lists the model aliases SetModel (and Options.Model)
// accepts, with what each resolves to and what it supports. Any other
// model id is accepted too and sent as given.
func (c *Client) SupportedModels() []ModelInfo {
	return convertSlice(c.c.SupportedModels(), func(m conversation.ModelInfo) ModelInfo { return ModelInfo(m) })
}

// SupportedAgents lists the subagents of this conversation, sorted by
// name, as init's agents names them: the built-in general-purpose agent
// unless redefined, the .claude/agents files and Options.Agents.
func (c *Client) SupportedAgents() []AgentInfo {
	return convertSlice(c.c.SupportedAgents(), func(a conversation.AgentInfo) AgentInfo { return AgentInfo(a) })
}

// SupportedCommands lists the slash commands a prompt of this
// conversation can invoke: the built-in /compact and /clear, then the file
// commands of .claude/commands and the skills (a skill a file command of
// the same name shadows is left out), in the order of init's
// slash_commands.
func (c *Client) SupportedCommands() []SlashCommand {
	return convertSlice(c.c.SupportedCommands(), func(s conversation.SlashCommand) SlashCommand { return SlashCommand(s) })
}

// ContextUsage measures the conversation's context as the next request
// would send it. It calls the provider's token counter
// ([model.TokenCounter], the count_tokens endpoint for the built-in
// provider) a few times to split system prompt, tools and messages, and
// estimates when the provider has none. While a query or a Messages
// stream of the client is being consumed it measures the request of the
// latest model call instead (the context as the model last saw it), and
// returns ErrBusy only when no model call has been made yet; a Query
// started while it measures between runs yields ErrBusy. After Close it
// returns ErrClosed. A failed count is returned as an error wrapping the
// provider's.
func (c *Client) ContextUsage(ctx context.Context) (*ContextUsage, error) {
	u, err := c.c.ContextUsage(ctx)
	return contextUsage(u), err
}

// MCPStatus reports the session's MCP servers: name, status (connected,
// failed, pending, disabled), source and, for a failed one, why.
func (c *Client) MCPStatus() []MCPServerStatus {
	return c.c.MCPStatus()
}

// ReconnectMCPServer closes the named server's connection and connects it
// again. The error says why that failed. The tools it offers once
// connected (one that failed at start, or whose tools changed) are
// declared from the session's next model request.
func (c *Client) ReconnectMCPServer(ctx context.Context, name string) error {
	return c.c.ReconnectMCPServer(ctx, name)
}

// ToggleMCPServer enables or disables the named server. A disabled server
// is disconnected, its tools are no longer declared from the next model
// request, and a call of one still made gets an is_error result; enabled
// again, it is connected and its tools are declared again.
func (c *Client) ToggleMCPServer(ctx context.Context, name string, enabled bool) error {
	return c.c.ToggleMCPServer(ctx, name, enabled)
}

// RewindFiles puts the files that Write, Edit and NotebookEdit changed
// since the user message userMessageID back as they were before it:
// files created since then are removed, changed ones get their content
// and permission bits back. Files changed by other means (Bash, the user)
// are not touched unless those tools also changed them; the conversation
// is not rewound. A file on whose path a symbolic link now stands is left
// alone and listed in SkippedLinks. With opts.DryRun nothing changes and
// the result says what would.
//
// An id the session has no checkpoint for gives a result with CanRewind
// false. It returns ErrFileCheckpointingOff when checkpointing is off,
// ErrClosed after Close, and ctx's error when ctx is done. It may be
// called while a query runs.
func (c *Client) RewindFiles(ctx context.Context, userMessageID string, opts *RewindOptions) (*RewindFilesResult, error) {
	var o *conversation.RewindOptions
	if opts != nil {
		o = &conversation.RewindOptions{DryRun: opts.DryRun}
	}
	res, err := c.c.RewindFiles(ctx, userMessageID, o)
	if res == nil {
		return nil, err
	}
	r := RewindFilesResult(*res)
	return &r, err
}

// FileCheckpoints returns the ids of the user messages RewindFiles can
// rewind to, oldest first: the uuids of the prompts' user lines since
// checkpointing began (those of a resumed session's earlier prompts
// included). It is nil when checkpointing is off.
func (c *Client) FileCheckpoints() []string {
	return c.c.FileCheckpoints()
}
