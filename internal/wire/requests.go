package wire

import (
	"encoding/json"
	"fmt"
)

// extras is embedded in the body types: the members not modelled.
type extras struct {
	// Extra holds the body's members this package does not model, as
	// given; nil when there are none.
	Extra map[string]json.RawMessage `json:"-"`
}

func (e *extras) extra() *map[string]json.RawMessage { return &e.Extra }

// InitializeRequest is the host's first request: how to set the session
// up. Members that are absent are nil or zero.
type InitializeRequest struct {
	// Hooks are the host's hook callbacks by event name.
	Hooks map[string][]HookMatcher `json:"hooks,omitzero"`
	// SDKMCPServers names the host's in-process MCP servers, reached
	// with mcp_message requests.
	SDKMCPServers         []string                   `json:"sdkMcpServers,omitzero"`
	SDKMCPServerConfigs   map[string]json.RawMessage `json:"sdkMcpServerConfigs,omitzero"`
	SDKMCPServerManifests map[string]MCPManifest     `json:"sdkMcpServerManifests,omitzero"`
	// JSONSchema is the output format's schema.
	JSONSchema json.RawMessage `json:"jsonSchema,omitzero"`
	// SystemPrompt replaces the system prompt: [""] asks for the minimal
	// one. Nil (the member absent) keeps the full default prompt.
	SystemPrompt           []string                   `json:"systemPrompt,omitzero"`
	AppendSystemPrompt     string                     `json:"appendSystemPrompt,omitzero"`
	SystemPromptSnapshot   json.RawMessage            `json:"systemPromptSnapshot,omitzero"`
	ExcludeDynamicSections *bool                      `json:"excludeDynamicSections,omitzero"`
	PlanModeInstructions   string                     `json:"planModeInstructions,omitzero"`
	Agents                 map[string]json.RawMessage `json:"agents,omitzero"`
	Title                  string                     `json:"title,omitzero"`
	Skills                 []string                   `json:"skills,omitzero"`
	PromptSuggestions      *bool                      `json:"promptSuggestions,omitzero"`
	AgentProgressSummaries *bool                      `json:"agentProgressSummaries,omitzero"`
	ForwardSubagentText    *bool                      `json:"forwardSubagentText,omitzero"`
	// The members delivered here rather than on the command line; the
	// answer says which were applied.
	MCPServers      map[string]json.RawMessage `json:"mcpServers,omitzero"`
	Settings        json.RawMessage            `json:"settings,omitzero"`
	ManagedSettings json.RawMessage            `json:"managedSettings,omitzero"`
	DisallowedTools []string                   `json:"disallowedTools,omitzero"`
	Plugins         json.RawMessage            `json:"plugins,omitzero"`
	extras
}

// Subtype is "initialize".
func (*InitializeRequest) Subtype() string { return "initialize" }

// HookMatcher is one registration of host hook callbacks for an event.
type HookMatcher struct {
	Matcher string `json:"matcher,omitzero"`
	// HookCallbackIDs name the callbacks, as hook_callback requests
	// give them back.
	HookCallbackIDs []string `json:"hookCallbackIds" wire:"required"`
	// Timeout is in seconds.
	Timeout   *float64                   `json:"timeout,omitzero"`
	OnFailure string                     `json:"onFailure,omitzero"`
	Extra     map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON reads the matcher strictly, keeping unknown members.
func (h *HookMatcher) UnmarshalJSON(b []byte) error {
	m, err := objectOf(b)
	if err != nil {
		return err
	}
	type plain HookMatcher
	var p plain
	extra, err := decodeObject(m, &p)
	if err != nil {
		return err
	}
	p.Extra = extra
	*h = HookMatcher(p)
	return nil
}

// MarshalJSON writes the matcher with its unknown members.
func (h HookMatcher) MarshalJSON() ([]byte, error) {
	type plain struct {
		Matcher         string   `json:"matcher,omitzero"`
		HookCallbackIDs []string `json:"hookCallbackIds"`
		Timeout         *float64 `json:"timeout,omitzero"`
		OnFailure       string   `json:"onFailure,omitzero"`
	}
	return encodeObject(plain{h.Matcher, h.HookCallbackIDs, h.Timeout, h.OnFailure}, h.Extra, nil)
}

// MCPManifest is a pre-captured handshake of an in-process MCP server:
// the answers to initialize and tools/list.
type MCPManifest struct {
	InitializeResult json.RawMessage `json:"initializeResult,omitzero"`
	ToolsListResult  json.RawMessage `json:"toolsListResult,omitzero"`
}

// InterruptRequest ends the current turn.
type InterruptRequest struct {
	// CancelQueued also drops the queued user messages.
	CancelQueued *bool `json:"cancel_queued,omitzero"`
	extras
}

// Subtype is "interrupt".
func (*InterruptRequest) Subtype() string { return "interrupt" }

// SetPermissionModeRequest changes the permission mode.
type SetPermissionModeRequest struct {
	Mode                    string `json:"mode" wire:"required"`
	AnswersBypassSwitchBack *bool  `json:"answers_bypass_switch_back,omitzero"`
	extras
}

// Subtype is "set_permission_mode".
func (*SetPermissionModeRequest) Subtype() string { return "set_permission_mode" }

// SetModelRequest changes the model.
type SetModelRequest struct {
	// Model nil (absent or null) resets to the default model.
	Model *string `json:"model,omitzero"`
	extras
}

// Subtype is "set_model".
func (*SetModelRequest) Subtype() string { return "set_model" }

// SetMaxThinkingTokensRequest changes the thinking budget.
type SetMaxThinkingTokensRequest struct {
	// MaxThinkingTokens nil (absent or null) resets to the default.
	MaxThinkingTokens *int   `json:"max_thinking_tokens,omitzero"`
	ThinkingDisplay   string `json:"thinking_display,omitzero"`
	extras
}

// Subtype is "set_max_thinking_tokens".
func (*SetMaxThinkingTokensRequest) Subtype() string { return "set_max_thinking_tokens" }

// MCPStatusRequest asks for the MCP servers' status.
type MCPStatusRequest struct {
	LiveReply *bool `json:"liveReply,omitzero"`
	extras
}

// Subtype is "mcp_status".
func (*MCPStatusRequest) Subtype() string { return "mcp_status" }

// GetContextUsageRequest asks for the context window's use.
type GetContextUsageRequest struct {
	Detail string `json:"detail,omitzero"` // summary or full
	extras
}

// Subtype is "get_context_usage".
func (*GetContextUsageRequest) Subtype() string { return "get_context_usage" }

func (r *GetContextUsageRequest) check() error {
	switch r.Detail {
	case "", "summary", "full":
		return nil
	}
	return &fieldError{path: "detail", reason: fmt.Sprintf("want summary or full, got %s", quote(r.Detail))}
}

// RewindFilesRequest restores the files as they were at a user message.
type RewindFilesRequest struct {
	UserMessageID string `json:"user_message_id" wire:"required"`
	// DryRun reports what would change without changing it.
	DryRun *bool `json:"dry_run,omitzero"`
	extras
}

// Subtype is "rewind_files".
func (*RewindFilesRequest) Subtype() string { return "rewind_files" }

// GetSettingsRequest asks for the effective settings.
type GetSettingsRequest struct{ extras }

// Subtype is "get_settings".
func (*GetSettingsRequest) Subtype() string { return "get_settings" }

// ApplyFlagSettingsRequest merges settings into the flag layer.
type ApplyFlagSettingsRequest struct {
	Settings json.RawMessage `json:"settings" wire:"required"`
	extras
}

// Subtype is "apply_flag_settings".
func (*ApplyFlagSettingsRequest) Subtype() string { return "apply_flag_settings" }

// StopTaskRequest stops a background task.
type StopTaskRequest struct {
	TaskID string `json:"task_id" wire:"required"`
	extras
}

// Subtype is "stop_task".
func (*StopTaskRequest) Subtype() string { return "stop_task" }

// MCPReconnectRequest restarts an MCP server.
type MCPReconnectRequest struct {
	ServerName string `json:"serverName" wire:"required"`
	extras
}

// Subtype is "mcp_reconnect".
func (*MCPReconnectRequest) Subtype() string { return "mcp_reconnect" }

// MCPToggleRequest turns an MCP server on or off.
type MCPToggleRequest struct {
	ServerName string `json:"serverName" wire:"required"`
	Enabled    *bool  `json:"enabled" wire:"required"`
	extras
}

// Subtype is "mcp_toggle".
func (*MCPToggleRequest) Subtype() string { return "mcp_toggle" }

// MCPSetServersRequest replaces the dynamic MCP servers.
type MCPSetServersRequest struct {
	Servers map[string]json.RawMessage `json:"servers" wire:"required"`
	extras
}

// Subtype is "mcp_set_servers".
func (*MCPSetServersRequest) Subtype() string { return "mcp_set_servers" }

// MCPMessageRequest carries one JSON-RPC message to or from an
// in-process MCP server of the host.
type MCPMessageRequest struct {
	ServerName string          `json:"server_name" wire:"required"`
	Message    json.RawMessage `json:"message" wire:"required"`
	extras
}

// Subtype is "mcp_message".
func (*MCPMessageRequest) Subtype() string { return "mcp_message" }

func (r *MCPMessageRequest) check() error {
	if jsonKind(r.Message) != "object" {
		return &fieldError{path: "message", reason: "want a JSON-RPC object, got " + jsonKind(r.Message)}
	}
	return nil
}

// CanUseToolRequest asks the host whether a tool call may run.
type CanUseToolRequest struct {
	ToolName              string          `json:"tool_name" wire:"required"`
	Input                 json.RawMessage `json:"input" wire:"required"`
	ToolUseID             string          `json:"tool_use_id,omitzero"`
	PermissionSuggestions json.RawMessage `json:"permission_suggestions,omitzero"`
	BlockedPath           string          `json:"blocked_path,omitzero"`
	DecisionReason        string          `json:"decision_reason,omitzero"`
	Title                 string          `json:"title,omitzero"`
	DisplayName           string          `json:"display_name,omitzero"`
	Description           string          `json:"description,omitzero"`
	AgentID               string          `json:"agent_id,omitzero"`
	extras
}

// Subtype is "can_use_tool".
func (*CanUseToolRequest) Subtype() string { return "can_use_tool" }

// HookCallbackRequest asks the host to run one of its hook callbacks.
type HookCallbackRequest struct {
	CallbackID string          `json:"callback_id" wire:"required"`
	Input      json.RawMessage `json:"input" wire:"required"`
	ToolUseID  string          `json:"tool_use_id,omitzero"`
	extras
}

// Subtype is "hook_callback".
func (*HookCallbackRequest) Subtype() string { return "hook_callback" }

// ElicitationRequest passes an MCP server's request for user input to
// the host.
type ElicitationRequest struct {
	MCPServerName   string          `json:"mcp_server_name" wire:"required"`
	Message         string          `json:"message" wire:"required"`
	Mode            string          `json:"mode,omitzero"`
	URL             string          `json:"url,omitzero"`
	ElicitationID   string          `json:"elicitation_id,omitzero"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitzero"`
	extras
}

// Subtype is "elicitation".
func (*ElicitationRequest) Subtype() string { return "elicitation" }

// RequestUserDialogRequest asks the host to show a dialog.
type RequestUserDialogRequest struct {
	DialogKind string          `json:"dialog_kind" wire:"required"`
	Payload    json.RawMessage `json:"payload,omitzero"`
	ToolUseID  string          `json:"tool_use_id,omitzero"`
	extras
}

// Subtype is "request_user_dialog".
func (*RequestUserDialogRequest) Subtype() string { return "request_user_dialog" }
