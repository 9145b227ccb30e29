package wire

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agentloop/agentloop/internal/lazy"
)

// ControlRequest asks the other side to do something; it is answered by
// exactly one ControlResponse with the same RequestID (a few subtypes
// are documented as never answered).
type ControlRequest struct {
	RequestID string
	// Request is the body: one of the *…Request types of this package,
	// or *OtherRequest for a subtype without one.
	Request Request
}

// Request is the body of a control request.
type Request interface {
	// Subtype is the body's "subtype" member.
	Subtype() string
}

// Type is "control_request".
func (*ControlRequest) Type() string { return TypeControlRequest }

// MarshalJSON writes the line, with its type and the body's subtype.
func (r *ControlRequest) MarshalJSON() ([]byte, error) {
	if r.Request == nil {
		return nil, fmt.Errorf("control request %s has no body", quote(r.RequestID))
	}
	body, err := encodeBody(r.Request)
	if err != nil {
		return nil, err
	}
	return marshal(map[string]any{"type": TypeControlRequest, "request_id": r.RequestID, "request": json.RawMessage(body)})
}

// Direction is which side sends a control request subtype.
type Direction int

// The directions.
const (
	HostToEngine Direction = 1 << iota // the SDK asks the engine
	EngineToHost                       // the engine asks the SDK
	Both         = HostToEngine | EngineToHost
)

// subtypeInfo describes a known subtype: who sends it, and its body type
// (nil: *OtherRequest).
type subtypeInfo struct {
	dir  Direction
	body func() Request
}

var subtypesOnce lazy.Value[map[string]subtypeInfo] // the value of subtypes, built at its first use

// subtypes returns the control request subtypes of wire-protocol.md and
// sdk-surface.md §G.
func subtypes() map[string]subtypeInfo { return subtypesOnce.Get(newSubtypes) }

func newSubtypes() map[string]subtypeInfo {
	return map[string]subtypeInfo{
		// Host to engine, with a body type.
		"initialize":              {HostToEngine, func() Request { return new(InitializeRequest) }},
		"interrupt":               {HostToEngine, func() Request { return new(InterruptRequest) }},
		"set_permission_mode":     {HostToEngine, func() Request { return new(SetPermissionModeRequest) }},
		"set_model":               {HostToEngine, func() Request { return new(SetModelRequest) }},
		"set_max_thinking_tokens": {HostToEngine, func() Request { return new(SetMaxThinkingTokensRequest) }},
		"mcp_status":              {HostToEngine, func() Request { return new(MCPStatusRequest) }},
		"get_context_usage":       {HostToEngine, func() Request { return new(GetContextUsageRequest) }},
		"rewind_files":            {HostToEngine, func() Request { return new(RewindFilesRequest) }},
		"get_settings":            {HostToEngine, func() Request { return new(GetSettingsRequest) }},
		"apply_flag_settings":     {HostToEngine, func() Request { return new(ApplyFlagSettingsRequest) }},
		"stop_task":               {HostToEngine, func() Request { return new(StopTaskRequest) }},
		"mcp_reconnect":           {HostToEngine, func() Request { return new(MCPReconnectRequest) }},
		"mcp_toggle":              {HostToEngine, func() Request { return new(MCPToggleRequest) }},
		"mcp_set_servers":         {HostToEngine, func() Request { return new(MCPSetServersRequest) }},
		// Either way: JSON-RPC to or from an in-process MCP server.
		"mcp_message": {Both, func() Request { return new(MCPMessageRequest) }},
		// Engine to host, with a body type.
		"can_use_tool":        {EngineToHost, func() Request { return new(CanUseToolRequest) }},
		"hook_callback":       {EngineToHost, func() Request { return new(HookCallbackRequest) }},
		"elicitation":         {EngineToHost, func() Request { return new(ElicitationRequest) }},
		"request_user_dialog": {EngineToHost, func() Request { return new(RequestUserDialogRequest) }},
	}
}

var otherSubtypesOnce lazy.Value[map[string]Direction] // the value of otherSubtypes, built at its first use

// otherSubtypes returns the other known subtypes, read as *OtherRequest.
func otherSubtypes() map[string]Direction { return otherSubtypesOnce.Get(newOtherSubtypes) }

func newOtherSubtypes() map[string]Direction {
	return map[string]Direction{
		"update_settings": HostToEngine, "get_hooks_listing": HostToEngine, "get_task_output": HostToEngine,
		"list_permission_rules": HostToEngine, "cancel_async_message": HostToEngine, "seed_read_state": HostToEngine,
		"set_cwd": HostToEngine, "background_tasks": HostToEngine, "mcp_read_resource": HostToEngine,
		"mcp_call": HostToEngine, "mcp_authenticate": HostToEngine, "mcp_clear_auth": HostToEngine,
		"mcp_oauth_callback_url": HostToEngine, "channel_enable": HostToEngine, "reload_plugins": HostToEngine,
		"reload_skills": HostToEngine, "reload_output_styles": HostToEngine, "rename_session": HostToEngine,
		"generate_session_title": HostToEngine, "side_question": HostToEngine, "submit_feedback": HostToEngine,
		"get_usage": HostToEngine, "get_status": HostToEngine, "get_session_cost": HostToEngine,
		"list_models": HostToEngine, "get_binary_version": HostToEngine, "export_conversation": HostToEngine,
		"read_file": HostToEngine, "file_suggestions": HostToEngine, "get_plan": HostToEngine,
		"claim_session": HostToEngine, "remote_control": HostToEngine, "message_rated": HostToEngine,
		"set_mcp_permission_mode_override": HostToEngine, "set_chrome_browser_hints": HostToEngine,
		"set_prompt_suggestions_paused": HostToEngine, "prompt_draft_activity": HostToEngine,
		"ultrareview_launch": HostToEngine, "claude_authenticate": HostToEngine, "claude_oauth_callback": HostToEngine,
		"claude_oauth_wait_for_completion": HostToEngine, "set_color": HostToEngine, "set_has_subscribers": HostToEngine,
		"register_repo_root":  HostToEngine,
		"oauth_token_refresh": EngineToHost, "host_auth_token_refresh": EngineToHost, "remote_control_work_secret": EngineToHost,
		"ui_copy": EngineToHost, "ui_prompt_read": EngineToHost, "ui_prompt_fill": EngineToHost, "ui_prompt_paint": EngineToHost,
		"ui_prompt_suggest": EngineToHost, "ui_read_selection": EngineToHost,
		"remote_tool_call": EngineToHost, "remote_plumbing_call": EngineToHost, "remote_tools_probe": EngineToHost,
		"remote_tools_reannounce": EngineToHost,
	}
}

// Subtypes lists the control request subtypes the protocol has (as far
// as the spec records them) that dir covers, sorted. A subtype outside
// the list still decodes, as *OtherRequest.
func Subtypes(dir Direction) []string {
	var out []string
	for s, info := range subtypes() {
		if info.dir&dir != 0 {
			out = append(out, s)
		}
	}
	for s, d := range otherSubtypes() {
		if d&dir != 0 {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// KnownSubtype reports whether subtype is one the spec records, and who
// sends it.
func KnownSubtype(subtype string) (Direction, bool) {
	if info, ok := subtypes()[subtype]; ok {
		return info.dir, true
	}
	d, ok := otherSubtypes()[subtype]
	return d, ok
}

// decodeRequest reads a control_request line.
func decodeRequest(m map[string]json.RawMessage, fail func(error, *DecodeError) (Message, error)) (Message, error) {
	de := &DecodeError{}
	var head struct {
		RequestID string          `json:"request_id" wire:"required"`
		Request   json.RawMessage `json:"request" wire:"required"`
	}
	// The id first, so that later errors carry it.
	if raw, ok := m["request_id"]; ok {
		_ = json.Unmarshal(raw, &de.RequestID)
	}
	extra, err := decodeObject(m, &head, "type")
	if err != nil {
		return fail(err, de)
	}
	if head.RequestID == "" {
		return fail(&fieldError{path: "request_id", reason: "is empty"}, de)
	}
	if len(extra) > 0 {
		return fail(&fieldError{path: slices.Sorted(maps.Keys(extra))[0], reason: "is not a member of a control_request (the body goes in request)"}, de)
	}
	body, err := objectOf(head.Request)
	if err != nil {
		return fail(asField(err).under("request"), de)
	}
	rawSub, ok := body["subtype"]
	if !ok {
		return fail(&fieldError{path: "request.subtype", reason: "is missing"}, de)
	}
	var sub string
	if err := json.Unmarshal(rawSub, &sub); err != nil || sub == "" {
		return fail(&fieldError{path: "request.subtype", reason: "want a subtype name, got " + jsonKind(rawSub)}, de)
	}
	de.Subtype = sub
	req, err := decodeBody(sub, body)
	if err != nil {
		return fail(asField(err).under("request"), de)
	}
	return &ControlRequest{RequestID: head.RequestID, Request: req}, nil
}

// decodeBody reads the body of a subtype; body has the member subtype.
func decodeBody(sub string, body map[string]json.RawMessage) (Request, error) {
	info, ok := subtypes()[sub]
	if !ok {
		delete(body, "subtype")
		if len(body) == 0 {
			body = nil
		}
		return &OtherRequest{Name: sub, Fields: body}, nil
	}
	req := info.body()
	extra, err := decodeObject(body, req, "subtype")
	if err != nil {
		return nil, err
	}
	if c, ok := req.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	setExtra(req, extra)
	return req, nil
}

// setExtra stores extra in the Extra field of req.
func setExtra(req Request, extra map[string]json.RawMessage) {
	if e, ok := req.(interface {
		extra() *map[string]json.RawMessage
	}); ok {
		*e.extra() = extra
	}
}

// encodeBody writes a body with its subtype and extra members.
func encodeBody(req Request) ([]byte, error) {
	if o, ok := req.(*OtherRequest); ok {
		return encodeObject(struct{}{}, o.Fields, map[string]any{"subtype": o.Name})
	}
	var extra map[string]json.RawMessage
	if e, ok := req.(interface {
		extra() *map[string]json.RawMessage
	}); ok {
		extra = *e.extra()
	}
	return encodeObject(req, extra, map[string]any{"subtype": req.Subtype()})
}

// OtherRequest is the body of a subtype without a type of its own here:
// its members, as given.
type OtherRequest struct {
	Name   string
	Fields map[string]json.RawMessage // the members other than subtype; nil when none
}

// Subtype is Name.
func (o *OtherRequest) Subtype() string { return o.Name }

// ControlResponse answers a ControlRequest: with success and a payload,
// or with an error.
type ControlResponse struct {
	RequestID string
	// IsError tells the two apart: Error (and ErrorCode) are set on an
	// error, Response on a success.
	IsError bool
	// Response is the success payload, nil when the success has none.
	Response json.RawMessage
	Error    string
	// ErrorCode is a machine-readable error kind, such as
	// ErrorCodeUnsupported.
	ErrorCode string
	// Extra holds the other members of the inner response object, such
	// as pending_permission_requests beside an initialize answer.
	Extra map[string]json.RawMessage
}

// ErrorCodeUnsupported is the error code of an answer to a subtype the
// receiver does not handle.
const ErrorCodeUnsupported = "unsupported_request"

// Success returns a success answer to id with payload (nil: none).
func Success(id string, payload any) (*ControlResponse, error) {
	r := &ControlResponse{RequestID: id}
	if payload != nil {
		b, err := marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("wire: encoding the answer to %s: %w", quote(id), err)
		}
		r.Response = b
	}
	return r, nil
}

// Failure returns an error answer to id.
func Failure(id, text, code string) *ControlResponse {
	return &ControlResponse{RequestID: id, IsError: true, Error: text, ErrorCode: code}
}

// Unsupported returns the answer to a request of a subtype the engine
// does not handle, in the words the SDK uses for its own.
func Unsupported(id, subtype string) *ControlResponse {
	return Failure(id, "Unsupported control request subtype: "+subtype, ErrorCodeUnsupported)
}

// Type is "control_response".
func (*ControlResponse) Type() string { return TypeControlResponse }

// MarshalJSON writes the line, with its type.
func (r *ControlResponse) MarshalJSON() ([]byte, error) {
	inner := map[string]any{"request_id": r.RequestID}
	if r.IsError {
		inner["subtype"] = "error"
		inner["error"] = r.Error
		if r.ErrorCode != "" {
			inner["error_code"] = r.ErrorCode
		}
	} else {
		inner["subtype"] = "success"
		if r.Response != nil {
			inner["response"] = r.Response
		}
	}
	body, err := encodeObject(struct{}{}, r.Extra, inner)
	if err != nil {
		return nil, err
	}
	return marshal(map[string]any{"type": TypeControlResponse, "response": json.RawMessage(body)})
}

// decodeResponse reads a control_response line.
func decodeResponse(m map[string]json.RawMessage, fail func(error, *DecodeError) (Message, error)) (Message, error) {
	de := &DecodeError{}
	var head struct {
		Response json.RawMessage `json:"response" wire:"required"`
	}
	extra, err := decodeObject(m, &head, "type")
	if err != nil {
		return fail(err, de)
	}
	if len(extra) > 0 {
		return fail(&fieldError{path: slices.Sorted(maps.Keys(extra))[0], reason: "is not a member of a control_response (the answer goes in response)"}, de)
	}
	inner, err := objectOf(head.Response)
	if err != nil {
		return fail(asField(err).under("response"), de)
	}
	if raw, ok := inner["request_id"]; ok {
		_ = json.Unmarshal(raw, &de.RequestID)
	}
	var body struct {
		Subtype   string          `json:"subtype" wire:"required"`
		RequestID string          `json:"request_id" wire:"required"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
		ErrorCode string          `json:"error_code"`
	}
	extra, err = decodeObject(inner, &body)
	if err != nil {
		return fail(asField(err).under("response"), de)
	}
	r := &ControlResponse{RequestID: body.RequestID, Extra: extra}
	switch body.Subtype {
	case "success":
		if len(body.Response) > 0 {
			r.Response = body.Response
		}
		if body.Error != "" || body.ErrorCode != "" {
			return fail(&fieldError{path: "response.error", reason: "is set on a success"}, de)
		}
	case "error":
		if _, ok := inner["error"]; !ok {
			return fail(&fieldError{path: "response.error", reason: "is missing"}, de)
		}
		if body.Response != nil {
			return fail(&fieldError{path: "response.response", reason: "is set on an error"}, de)
		}
		r.IsError, r.Error, r.ErrorCode = true, body.Error, body.ErrorCode
	default:
		return fail(&fieldError{path: "response.subtype", reason: fmt.Sprintf("want success or error, got %s", quote(body.Subtype))}, de)
	}
	return r, nil
}
