package message

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// System subtypes this package models field by field.
const (
	SubtypeInit             = "init"
	SubtypeAPIRetry         = "api_retry"
	SubtypePermissionDenied = "permission_denied"
	SubtypeStatus           = "status"
	SubtypeCompactBoundary  = "compact_boundary"
)

// System is a system line. Exactly one of the typed fields is set for the
// subtypes this package models; Data holds the other fields of any subtype.
type System struct {
	Subtype   string
	SessionID string
	UUID      string

	Init             *Init
	APIRetry         *APIRetry
	PermissionDenied *PermissionDenied
	Status           *Status

	// Data holds fields of subtypes without a typed field, and is written
	// as part of the line.
	Data map[string]json.RawMessage
}

// Init is the first message of a run: what the session was configured with.
type Init struct {
	Cwd                   string      `json:"cwd"`
	Tools                 []string    `json:"tools"`
	MCPServers            []MCPServer `json:"mcp_servers"`
	Model                 string      `json:"model"`
	PermissionMode        string      `json:"permissionMode"`
	SlashCommands         []string    `json:"slash_commands"`
	APIKeySource          string      `json:"apiKeySource"`
	Version               string      `json:"agentloop_version"`
	OutputStyle           string      `json:"output_style"`
	Agents                []string    `json:"agents"`
	Skills                []string    `json:"skills"`
	Plugins               []any       `json:"plugins"`
	AdditionalDirectories []string    `json:"additional_directories"`
	Effort                string      `json:"effort,omitempty"`
	// Betas are the beta features the session asked for (Options.Betas).
	Betas []string `json:"betas,omitempty"`
	// SandboxEnabled reports whether Bash commands run in the kernel
	// sandbox.
	SandboxEnabled bool `json:"sandbox_enabled"`
	// SandboxUnavailable says why Bash commands run unsandboxed although
	// the session wants them sandboxed (by default, by its settings or in
	// plan mode): the kernel cannot sandbox. Empty otherwise. An
	// agentloop field; the reference has none.
	SandboxUnavailable string `json:"sandbox_unavailable,omitempty"`
}

// PluginInfo is one plugin of Init.Plugins, whose elements are
// PluginInfo values when the session writes them.
type PluginInfo struct {
	Name string `json:"name"`
	// Path is the plugin's root directory.
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
}

// MCPServer is an MCP server's name and connection status.
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Source says where the server's configuration came from (sdk,
	// dynamic, project, ...).
	Source string `json:"source,omitempty"`
}

// APIRetry announces a retry of a failed model request.
type APIRetry struct {
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMs int64  `json:"retry_delay_ms"`
	ErrorStatus  *int   `json:"error_status"` // nil for a connection error
	Error        string `json:"error"`
	// Detail is the failure in words (e.g. "no such host", a stalled
	// stream), for people; it is not part of the wire format.
	Detail string `json:"-"`
}

// PermissionDenied reports a tool call that was not allowed to run.
type PermissionDenied struct {
	ToolName           string `json:"tool_name"`
	ToolUseID          string `json:"tool_use_id"`
	Message            string `json:"message"`
	DecisionReasonType string `json:"decision_reason_type,omitempty"`
	DecisionReason     string `json:"decision_reason,omitempty"`
}

// Status reports what the session is doing (requesting, compacting).
type Status struct {
	Status *string `json:"status"`
}

// MarshalJSON writes the line with the subtype's fields inline.
func (s *System) MarshalJSON() ([]byte, error) {
	var body any
	switch {
	case s.Init != nil:
		body = s.Init
	case s.APIRetry != nil:
		body = s.APIRetry
	case s.PermissionDenied != nil:
		body = s.PermissionDenied
	case s.Status != nil:
		body = s.Status
	}
	var buf bytes.Buffer
	buf.WriteString(`{"type":"system","subtype":`)
	writeJSON(&buf, s.Subtype)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("system/%s: %w", s.Subtype, err)
		}
		if len(b) > 2 {
			buf.WriteByte(',')
			buf.Write(b[1 : len(b)-1])
		}
	}
	for k, v := range s.Data {
		switch k {
		case "type", "subtype", "session_id", "uuid":
			continue
		}
		buf.WriteByte(',')
		writeJSON(&buf, k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteString(`,"session_id":`)
	writeJSON(&buf, s.SessionID)
	buf.WriteString(`,"uuid":`)
	writeJSON(&buf, s.UUID)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a system line; known subtypes fill their typed field.
func (s *System) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	var head struct {
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		UUID      string `json:"uuid"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	*s = System{Subtype: head.Subtype, SessionID: head.SessionID, UUID: head.UUID}
	var target any
	switch head.Subtype {
	case SubtypeInit:
		s.Init = &Init{}
		target = s.Init
	case SubtypeAPIRetry:
		s.APIRetry = &APIRetry{}
		target = s.APIRetry
	case SubtypePermissionDenied:
		s.PermissionDenied = &PermissionDenied{}
		target = s.PermissionDenied
	case SubtypeStatus:
		s.Status = &Status{}
		target = s.Status
	default:
		delete(all, "type")
		delete(all, "subtype")
		delete(all, "session_id")
		delete(all, "uuid")
		s.Data = all
		return nil
	}
	if err := json.Unmarshal(b, target); err != nil {
		return fmt.Errorf("system/%s: %w", head.Subtype, err)
	}
	return nil
}

func writeJSON(buf *bytes.Buffer, v any) {
	b, _ := json.Marshal(v)
	buf.Write(b)
}
