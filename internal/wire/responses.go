package wire

import (
	"encoding/json"
	"fmt"
)

// PermissionResult is the host's answer to a can_use_tool request.
type PermissionResult struct {
	Behavior string `json:"behavior" wire:"required"` // allow or deny
	// UpdatedInput replaces the tool's input (allow only); nil keeps it.
	UpdatedInput       json.RawMessage `json:"updatedInput,omitzero"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions,omitzero"`
	// Message says why (deny only); it goes to the model.
	Message string `json:"message,omitzero"`
	// Interrupt also ends the turn (deny only).
	Interrupt              bool                       `json:"interrupt,omitzero"`
	ToolUseID              string                     `json:"toolUseID,omitzero"`
	DecisionClassification json.RawMessage            `json:"decisionClassification,omitzero"`
	Extra                  map[string]json.RawMessage `json:"-"`
}

// DecodePermissionResult reads the payload of a success answer to a
// can_use_tool request.
func DecodePermissionResult(payload json.RawMessage) (*PermissionResult, error) {
	m, err := objectOf(payload)
	if err != nil {
		return nil, fmt.Errorf("wire: permission result: %w", err)
	}
	var p PermissionResult
	extra, err := decodeObject(m, &p)
	if err != nil {
		return nil, fmt.Errorf("wire: permission result: %w", err)
	}
	p.Extra = extra
	switch p.Behavior {
	case "allow":
		if p.UpdatedInput != nil && jsonKind(p.UpdatedInput) != "object" {
			return nil, fmt.Errorf("wire: permission result: %w", &fieldError{path: "updatedInput", reason: "want an object, got " + jsonKind(p.UpdatedInput)})
		}
	case "deny":
		if _, ok := m["message"]; !ok {
			return nil, fmt.Errorf("wire: permission result: %w", &fieldError{path: "message", reason: "is missing"})
		}
	default:
		return nil, fmt.Errorf("wire: permission result: %w", &fieldError{path: "behavior", reason: fmt.Sprintf("want allow or deny, got %s", quote(p.Behavior))})
	}
	return &p, nil
}

// DecodeMCPResponse reads the payload of a success answer to an
// mcp_message request: the JSON-RPC message in mcp_response.
func DecodeMCPResponse(payload json.RawMessage) (json.RawMessage, error) {
	m, err := objectOf(payload)
	if err != nil {
		return nil, fmt.Errorf("wire: mcp_message answer: %w", err)
	}
	var p struct {
		MCPResponse json.RawMessage `json:"mcp_response" wire:"required"`
	}
	if _, err := decodeObject(m, &p); err != nil {
		return nil, fmt.Errorf("wire: mcp_message answer: %w", err)
	}
	if jsonKind(p.MCPResponse) != "object" {
		return nil, fmt.Errorf("wire: mcp_message answer: %w", &fieldError{path: "mcp_response", reason: "want a JSON-RPC object, got " + jsonKind(p.MCPResponse)})
	}
	return p.MCPResponse, nil
}

// InitializeResponse is the engine's answer to initialize: what the
// session offers. The SDK reads commands, agents, models and account,
// and the *Applied flags of what the request delivered.
type InitializeResponse struct {
	Commands              []Command   `json:"commands"`
	Agents                []AgentInfo `json:"agents"`
	OutputStyle           string      `json:"output_style"`
	AvailableOutputStyles []string    `json:"available_output_styles"`
	Models                []ModelInfo `json:"models"`
	Account               Account     `json:"account"`
	PID                   int         `json:"pid"`
	// Version is the engine's version, in claude_code_version.
	Version                string `json:"claude_code_version"`
	CurrentPermissionMode  string `json:"current_permission_mode,omitzero"`
	HookOnFailureSupported bool   `json:"hook_on_failure_supported"`
	// Each *Applied is set when the request delivered that member:
	// true when it is honoured.
	HooksApplied           *bool `json:"hooks_applied,omitzero"`
	SettingsApplied        *bool `json:"settings_applied,omitzero"`
	DisallowedToolsApplied *bool `json:"disallowed_tools_applied,omitzero"`
	ManagedSettingsApplied *bool `json:"managed_settings_applied,omitzero"`
	MCPServersApplied      *bool `json:"mcp_servers_applied,omitzero"`
	PluginsApplied         *bool `json:"plugins_applied,omitzero"`
}

// Command is a slash command the session offers.
type Command struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	ArgumentHint string   `json:"argumentHint"`
	Aliases      []string `json:"aliases,omitempty"`
	Builtin      bool     `json:"builtin,omitempty"`
}

// AgentInfo is an agent the session offers.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model,omitzero"`
}

// ModelInfo is a model the session may use.
type ModelInfo struct {
	Value       string `json:"value"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

// Account is what the session knows of its credentials.
type Account struct {
	TokenSource  string `json:"tokenSource,omitzero"`
	APIKeySource string `json:"apiKeySource,omitzero"`
	APIProvider  string `json:"apiProvider,omitzero"`
}

// InterruptResponse is the answer to interrupt: the uuids of the user
// messages still queued, and of those dropped (with cancel_queued).
type InterruptResponse struct {
	StillQueued []string `json:"still_queued"`
	Cancelled   []string `json:"cancelled,omitzero"`
}

// SetPermissionModeResponse is the answer to set_permission_mode: the
// mode now in effect.
type SetPermissionModeResponse struct {
	Mode string `json:"mode"`
}

// MCPResponse wraps an in-process server's JSON-RPC message in the
// answer to mcp_message.
type MCPResponse struct {
	MCPResponse json.RawMessage `json:"mcp_response"`
}
