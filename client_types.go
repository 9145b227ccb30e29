package agentloop

import (
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/model"
)

// RewindOptions are Client.RewindFiles's options; nil means none.
type RewindOptions struct {
	// DryRun reports what a rewind would change without changing it.
	DryRun bool
}

// RewindFilesResult is what Client.RewindFiles did (or, on a dry run,
// would do): the reference's RewindFilesResult.
type RewindFilesResult struct {
	// CanRewind is false when the user message has no checkpoint (an
	// unknown id, or one from before checkpointing was on); Error says so.
	CanRewind bool `json:"canRewind"`
	// Error says why nothing could be rewound, or which files could not
	// be restored.
	Error string `json:"error,omitempty"`
	// FilesChanged are the files restored or removed (on a dry run: that
	// would be), as physical paths, sorted.
	FilesChanged []string `json:"filesChanged,omitempty"`
	// Insertions and Deletions count the lines the rewind adds to and
	// removes from those files.
	Insertions int `json:"insertions,omitempty"`
	Deletions  int `json:"deletions,omitempty"`
	// SkippedLinks are files left alone because a symbolic link now
	// stands on their path (the file, or a directory above it): a rewind
	// never follows a link.
	SkippedLinks []string `json:"skippedLinks,omitempty"`
}

// The priorities of a queued UserInput, as the reference names them.
const (
	// PriorityNow runs the message before every other queued one and
	// interrupts the running turn, if any, to do so.
	PriorityNow = "now"
	// PriorityNext, the default, runs the message after the messages of
	// priority now and next queued before it.
	PriorityNext = "next"
	// PriorityLater runs the message after every message of priority now
	// or next, whenever it was queued.
	PriorityLater = "later"
)

// UserInput is one user message of streaming input: the reference's
// SDKUserMessage as a host writes it.
type UserInput struct {
	// Text is the message's text. A message that is exactly one text
	// (Text alone, or one text block) may be a slash command ("/compact",
	// "/clear", a file command or skill "/name args"), run as a Query
	// prompt would be.
	Text string
	// Content are further blocks after Text: text, image or document
	// blocks (with a base64, url or text source). At least one of Text
	// and Content is needed.
	Content []model.Content
	// UUID names the message; it becomes the uuid of its user line in the
	// stream and the transcript. Empty means a fresh one, which Send
	// returns. Two queued messages cannot share a uuid.
	UUID string
	// Priority is PriorityNow, PriorityNext or PriorityLater; empty means
	// PriorityNext.
	Priority string
	// ShouldQuery false adds the message to the conversation (history
	// and transcript) in its turn of the queue without a model call; the
	// next turn sends it along. Nil or true runs a turn.
	ShouldQuery *bool
}

// InterruptOptions are Client.Interrupt's options; nil means none.
type InterruptOptions struct {
	// CancelQueued also removes every queued message: they never run
	// (the reference's cancel_queued).
	CancelQueued bool
}

// InterruptResult is what Client.Interrupt did to the queue: the
// reference's {still_queued, cancelled}.
type InterruptResult struct {
	// StillQueued are the uuids of the messages that stay queued, in the
	// order they will run.
	StillQueued []string
	// Cancelled are the uuids of the messages CancelQueued removed.
	Cancelled []string
}

// ModelInfo describes a model a conversation can switch to with SetModel:
// the reference's ModelInfo, as its supportedModels() returns them.
type ModelInfo struct {
	// Value is what SetModel takes: an alias.
	Value string `json:"value"`
	// ResolvedModel is the model id the alias stands for.
	ResolvedModel string `json:"resolvedModel,omitempty"`
	// DisplayName and Description are for people.
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	// SupportsEffort: the model takes an effort level (SetEffort).
	SupportsEffort bool `json:"supportsEffort,omitempty"`
	// SupportedEffortLevels are the levels, when SupportsEffort.
	SupportedEffortLevels []string `json:"supportedEffortLevels,omitempty"`
	// SupportsAdaptiveThinking: the model thinks adaptively by default.
	SupportsAdaptiveThinking bool `json:"supportsAdaptiveThinking,omitempty"`
}

// AgentInfo describes a subagent the model can delegate to: the
// reference's AgentInfo.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Model is the agent's model setting; empty means it inherits the
	// session's.
	Model string `json:"model,omitempty"`
}

// SlashCommand describes a slash command a prompt can invoke: the
// reference's SlashCommand, as its supportedCommands() returns them.
type SlashCommand struct {
	// Name is the command's name, without the slash.
	Name string `json:"name"`
	// Description says what it does: a file command's description
	// (else its first line), a skill's description.
	Description string `json:"description"`
	// ArgumentHint shows what the command expects after its name (a
	// file command's argument-hint).
	ArgumentHint string `json:"argumentHint"`
	// Aliases are other names of the same command.
	Aliases []string `json:"aliases,omitempty"`
	// Builtin marks the commands agentloop itself runs.
	Builtin bool `json:"builtin,omitempty"`
}

// MessageBreakdown splits the conversation's messages by what they hold,
// as get_context_usage's messageBreakdown does. Its numbers are estimates,
// 4 bytes of each block's JSON a token, so they need not add up to the
// messages category exactly (that one comes from the API's count).
type MessageBreakdown struct {
	// ToolCallTokens are the model's tool_use blocks (server tool calls
	// included); ToolResultTokens the results given back for them.
	ToolCallTokens   int64 `json:"toolCallTokens"`
	ToolResultTokens int64 `json:"toolResultTokens"`
	// AttachmentTokens are the blocks agentloop or the caller attached to
	// user messages rather than the user's words: images, documents and
	// <system-reminder> context (hook context, reminders, the
	// environment). The CLAUDE.md block is left out: it is the
	// memory_files category.
	AttachmentTokens int64 `json:"attachmentTokens"`
	// AssistantMessageTokens are the model's text and thinking;
	// UserMessageTokens the user's own text (prompts, compaction
	// summaries).
	AssistantMessageTokens int64 `json:"assistantMessageTokens"`
	UserMessageTokens      int64 `json:"userMessageTokens"`
	// ToolCallsByType splits the tool calls and results by tool name, the
	// largest first; AttachmentsByType splits the attachments by kind
	// (image, document, context), the largest first. Both are empty
	// lists, never null.
	ToolCallsByType   []ToolCallTokens   `json:"toolCallsByType"`
	AttachmentsByType []AttachmentTokens `json:"attachmentsByType"`
}

// ToolCallTokens is one tool's share of the messages.
type ToolCallTokens struct {
	Name         string `json:"name"`
	CallTokens   int64  `json:"callTokens"`
	ResultTokens int64  `json:"resultTokens"`
}

// AttachmentTokens is one kind of attachment's share of the messages.
type AttachmentTokens struct {
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
}

// ContextUsage is how full a session's context window is, by category:
// the answer to the stream-json protocol's get_context_usage.
type ContextUsage struct {
	// Categories split the window. Those of kind "used" (system prompt,
	// tools, memory files, messages) add up to TotalTokens; with the
	// "free" one (and the "reserved" autocompact buffer, when compaction
	// is on) they add up to MaxTokens, unless the context is over it.
	Categories []ContextCategory `json:"categories"`
	// TotalTokens is the context in use: the input and output tokens of
	// the last reply as the API reported them when there is one, else
	// the count of what the next request would send.
	TotalTokens int64 `json:"totalTokens"`
	// MaxTokens is the model's context window (pricing's table;
	// DefaultContextWindow for a model it does not know).
	MaxTokens int64 `json:"maxTokens"`
	// Percentage is TotalTokens as a percentage of MaxTokens.
	Percentage float64 `json:"percentage"`
	Model      string  `json:"model"`
	// AutoCompactThreshold is the input size past which the session's
	// conversation counts as due for compaction (window − reserved
	// output − a buffer, of Options.AutoCompactWindow or the settings'
	// autoCompactWindow when set); IsAutoCompactEnabled says whether the
	// session compacts by itself.
	AutoCompactThreshold int64 `json:"autoCompactThreshold"`
	IsAutoCompactEnabled bool  `json:"isAutoCompactEnabled"`
	// Measured says how the categories were sized: "count_tokens" (the
	// provider's token-counting call) or "estimate" (4 bytes of JSON a
	// token, for providers that cannot count).
	Measured string `json:"measured"`
	// FromAPIUsage is set when TotalTokens comes from the last reply's
	// usage.
	FromAPIUsage bool `json:"fromApiUsage"`
	// MessageBreakdown splits the messages by what they hold (tool calls
	// and results by tool, attachments by kind); estimated, see
	// [MessageBreakdown].
	MessageBreakdown *MessageBreakdown `json:"messageBreakdown,omitempty"`
}

// ContextCategory is one part of the context window.
type ContextCategory struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
	// Kind is "used", "free" or "reserved".
	Kind string `json:"kind"`
}

// DefaultContextWindow is the window assumed for a model pricing's table
// does not know.
const DefaultContextWindow = conversation.DefaultContextWindow

// Attachment kinds of MessageBreakdown.AttachmentsByType.
const (
	AttachmentImage    = conversation.AttachmentImage
	AttachmentDocument = conversation.AttachmentDocument
	AttachmentContext  = conversation.AttachmentContext
)

// The category ids.
const (
	ContextSystemPrompt      = conversation.ContextSystemPrompt
	ContextSystemTools       = conversation.ContextSystemTools
	ContextMemoryFiles       = conversation.ContextMemoryFiles
	ContextMessages          = conversation.ContextMessages
	ContextFreeSpace         = conversation.ContextFreeSpace
	ContextAutocompactBuffer = conversation.ContextAutocompactBuffer
)
