package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/uuid"
)

// ErrUnsupported reports an option the durable path does not carry yet; the
// error names the fields. Set those on the worker's Options instead, or
// run the session in-process.
var ErrUnsupported = errors.New("agentloop/temporal: option not supported on the durable path")

// SessionInput is what a session workflow starts from: the prompt and the
// options of the session that travel with it. Everything that cannot be
// written down (the provider, custom tools, hooks, the session store)
// comes from the worker's Options (see NewWorker). It is recorded in the
// workflow's history, so it holds no secret.
type SessionInput struct {
	SessionID          string   `json:"sessionId"`
	Prompt             string   `json:"prompt"`
	Model              string   `json:"model,omitempty"`
	Cwd                string   `json:"cwd,omitempty"`
	SystemPrompt       string   `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string   `json:"appendSystemPrompt,omitempty"`
	Tools              []string `json:"tools"` // nil: the worker's; empty: none
	AllowedTools       []string `json:"allowedTools,omitempty"`
	DisallowedTools    []string `json:"disallowedTools,omitempty"`
	PermissionMode     string   `json:"permissionMode,omitempty"`
	MaxTurns           int      `json:"maxTurns,omitempty"`
	MaxBudgetUSD       float64  `json:"maxBudgetUsd,omitempty"`
	Effort             string   `json:"effort,omitempty"`
	// AskClient says the client answers the permission requests
	// (Options.CanUseTool given to Query): they wait in the workflow for
	// its answer (see Ask).
	AskClient bool `json:"askClient,omitempty"`
	// IncludePartialMessages streams the model's events as they arrive
	// (Options.IncludePartialMessages).
	IncludePartialMessages bool `json:"includePartialMessages,omitempty"`
	// OutputFormat asks for structured output (Options.OutputFormat),
	// with at most MaxStructuredOutputRetries failed attempts.
	OutputFormat               *agentloop.OutputFormat `json:"outputFormat,omitempty"`
	MaxStructuredOutputRetries int                     `json:"maxStructuredOutputRetries,omitempty"`
	// IdleTimeout is how long the session waits for its next prompt
	// before it ends; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration `json:"idleTimeout,omitempty"`
	// ContinueAfter is the history length (events) past which the
	// session goes on in a new run between prompts; 0 means
	// DefaultContinueAfter.
	ContinueAfter int `json:"continueAfter,omitempty"`
	// Carry is what a run started by continue-as-new goes on from.
	Carry *Carry `json:"carry,omitempty"`
}

// CompactionSpec is what the workflow's loop compacts by: the summary
// request is a model call like any other (an activity); the compaction
// hooks of the worker's settings do not run on this path.
type CompactionSpec struct {
	Disabled     bool   `json:"disabled,omitempty"`
	Window       int64  `json:"window,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// Carry is the conversation a session's new run (continue-as-new) goes on
// from: the loop's history and model, the stream lines of the last prompt
// (Tail, from index Lines: the client may still be reading them), and how
// many runs came before.
type Carry struct {
	History []model.Message   `json:"history"`
	Model   string            `json:"model,omitempty"`
	Lines   int               `json:"lines"` // the index of Tail's first line
	Tail    []json.RawMessage `json:"tail,omitempty"`
	Runs    int               `json:"runs"`
	// Started says SessionStart ran for the session (a new run after
	// continue-as-new does not run it again; one started from an ended
	// session's Summary does, as a resumed session).
	Started bool `json:"started,omitempty"`
}

// carried are the Options fields a SessionInput holds.
var carried = []string{"SessionID", "Model", "Cwd", "SystemPrompt", "AppendSystemPrompt", "Tools", "AllowedTools",
	"DisallowedTools", "PermissionMode", "MaxTurns", "MaxBudgetUSD", "Effort", "CanUseTool", "OutputFormat",
	"MaxStructuredOutputRetries", "IncludePartialMessages"}

// inputOf is the SessionInput of a Query; a field of o set but not carried
// is an ErrUnsupported naming it.
func inputOf(prompt string, o *agentloop.Options) (SessionInput, error) {
	in := SessionInput{Prompt: prompt}
	if o == nil {
		return in, nil
	}
	v := reflect.ValueOf(*o)
	var unsupported []string
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if !v.Field(i).IsZero() && !slices.Contains(carried, name) {
			unsupported = append(unsupported, name)
		}
	}
	if len(unsupported) > 0 {
		return in, fmt.Errorf("%w: %s (set them on the worker's Options)", ErrUnsupported, strings.Join(unsupported, ", "))
	}
	if o.SessionID != "" {
		if _, err := uuid.Parse(o.SessionID); err != nil {
			return in, fmt.Errorf("%w: session id %q is not a UUID", agentloop.ErrInvalidOption, o.SessionID)
		}
	}
	in.SessionID, in.Model, in.Cwd = o.SessionID, o.Model, o.Cwd
	in.SystemPrompt, in.AppendSystemPrompt = o.SystemPrompt, o.AppendSystemPrompt
	in.Tools, in.AllowedTools, in.DisallowedTools = o.Tools, o.AllowedTools, o.DisallowedTools
	in.PermissionMode, in.MaxTurns, in.MaxBudgetUSD, in.Effort = string(o.PermissionMode), o.MaxTurns, o.MaxBudgetUSD, o.Effort
	in.AskClient = o.CanUseTool != nil
	in.OutputFormat, in.MaxStructuredOutputRetries = o.OutputFormat, o.MaxStructuredOutputRetries
	in.IncludePartialMessages = o.IncludePartialMessages
	return in, nil
}

// overlay is the worker's options with in's on top: the session's
// configuration as the worker builds it.
func overlay(base *agentloop.Options, in SessionInput) *agentloop.Options {
	var o agentloop.Options
	if base != nil {
		o = *base
	}
	o.SessionID = in.SessionID
	// The workflow's history is the record; the worker writes the
	// transcript to a SessionStore itself (transcript.go).
	o.NoSessionPersistence, o.SessionStore, o.SessionStoreLeaseTTL = true, nil, 0
	if in.Model != "" {
		o.Model = in.Model
	}
	if in.Cwd != "" {
		o.Cwd = in.Cwd
	}
	if in.SystemPrompt != "" {
		o.SystemPrompt = in.SystemPrompt
	}
	if in.AppendSystemPrompt != "" {
		o.AppendSystemPrompt = in.AppendSystemPrompt
	}
	if in.Tools != nil {
		o.Tools = in.Tools
	}
	o.AllowedTools = append(slices.Clone(o.AllowedTools), in.AllowedTools...)
	o.DisallowedTools = append(slices.Clone(o.DisallowedTools), in.DisallowedTools...)
	if in.PermissionMode != "" {
		o.PermissionMode = agentloop.PermissionMode(in.PermissionMode)
	}
	if in.MaxTurns != 0 {
		o.MaxTurns = in.MaxTurns
	}
	if in.MaxBudgetUSD != 0 {
		o.MaxBudgetUSD = in.MaxBudgetUSD
	}
	if in.Effort != "" {
		o.Effort = in.Effort
	}
	if in.AskClient {
		o.CanUseTool = askClient
	}
	if in.OutputFormat != nil {
		o.OutputFormat = in.OutputFormat
	}
	if in.IncludePartialMessages {
		o.IncludePartialMessages = true
	}
	if in.MaxStructuredOutputRetries != 0 {
		o.MaxStructuredOutputRetries = in.MaxStructuredOutputRetries
	}
	return &o
}

// Description is what the workflow needs to run the session's loop: the
// parts of the worker's resolved session configuration that can be
// written into the workflow's history. Nothing in it is a secret.
type Description struct {
	Model          string          `json:"model"`
	FallbackModels []string        `json:"fallbackModels,omitempty"`
	System         []model.Content `json:"system,omitempty"`
	OpeningContext []model.Content `json:"openingContext,omitempty"`
	Tools          []tool.Info     `json:"tools,omitempty"`
	MaxTurns       int             `json:"maxTurns,omitempty"`
	MaxBudgetUSD   float64         `json:"maxBudgetUsd,omitempty"`
	MaxTokens      int             `json:"maxTokens,omitempty"`
	Thinking       *model.Thinking `json:"thinking,omitempty"`
	Effort         string          `json:"effort,omitempty"`
	Betas          []string        `json:"betas,omitempty"`
	Cwd            string          `json:"cwd"`
	// OutputSchema and MaxStructuredRetries are the session's structured
	// output (see engine.Config).
	OutputSchema         json.RawMessage `json:"outputSchema,omitempty"`
	MaxStructuredRetries int             `json:"maxStructuredRetries,omitempty"`
	// Hooks says the worker's session may have hooks (Options.Hooks, or
	// settings files read), so the loop's hook points run (as activities).
	Hooks bool `json:"hooks,omitempty"`
	// Persist says the worker's Options name a SessionStore: the loop
	// records the messages of each run, and the Persist activity writes
	// them to the session's transcript there.
	Persist bool `json:"persist,omitempty"`
	// Partial streams the model's events (stream_event messages).
	Partial bool `json:"partial,omitempty"`
	// Deferred are the tools declared to the model only once ToolSearch
	// has loaded them (the session's tool search catalog).
	Deferred []tool.Info `json:"deferred,omitempty"`
	// Compaction is the session's compaction, nil when it has none.
	Compaction *CompactionSpec `json:"compaction,omitempty"`
	// Init is the session's system/init message, the stream's first.
	Init *message.System `json:"init"`
	// NotCarried names what the worker's session has on that the durable
	// loop does not do yet; the workflow reports it in the stream.
	NotCarried []string `json:"notCarried,omitempty"`
}
