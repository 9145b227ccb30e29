package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// sameJSON reports whether a and b hold the same JSON value, where an
// object member that is null or "" is the same as no member: the
// protocol gives them one meaning, and encoding writes some of them
// (parent_tool_use_id) and leaves others out.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(dropEmpty(va), dropEmpty(vb))
}

func dropEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil || e == "" {
				delete(v, k)
				continue
			}
			v[k] = dropEmpty(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropEmpty(e)
		}
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// rawCmp compares json.RawMessage by value, not by spelling.
var rawCmp = cmp.Comparer(func(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
})

// TestDecode: lines decode to the values they stand for.
func TestDecode(t *testing.T) {
	cases := []struct {
		name string
		line string
		want Message
	}{
		{"user string", `{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}`,
			&User{Message: UserContent{Role: "user", Content: []model.Content{model.TextBlock("hi")}, Text: true}}},
		{"user blocks, priority, shouldQuery", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]},"priority":"now","shouldQuery":false,"uuid":"u1","origin":{"kind":"human"}}`,
			&User{Message: UserContent{Role: "user", Content: []model.Content{model.TextBlock("a"),
				{Type: "image", Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AA=="}}}},
				UUID: "u1", Priority: PriorityNow, ShouldQuery: ptr(false), Extra: map[string]json.RawMessage{"origin": json.RawMessage(`{"kind":"human"}`)}}},
		{"subagent user", `{"type":"user","message":{"role":"user","content":"x"},"parent_tool_use_id":"toolu_1"}`,
			&User{Message: UserContent{Role: "user", Content: []model.Content{model.TextBlock("x")}, Text: true}, ParentToolUseID: ptr("toolu_1")}},
		{"initialize", `{"type":"control_request","request_id":"a","request":{"subtype":"initialize","systemPrompt":[""],"hooks":{"PreToolUse":[{"matcher":"Write|Edit","hookCallbackIds":["hook_0"],"timeout":30,"contextOnly":true}]},"sdkMcpServers":["calc"],"rapidFollowupPreempt":true}}`,
			&ControlRequest{RequestID: "a", Request: &InitializeRequest{SystemPrompt: []string{""},
				Hooks: map[string][]HookMatcher{"PreToolUse": {{Matcher: "Write|Edit", HookCallbackIDs: []string{"hook_0"}, Timeout: ptr(30.0),
					Extra: map[string]json.RawMessage{"contextOnly": json.RawMessage("true")}}}},
				SDKMCPServers: []string{"calc"}, extras: extras{map[string]json.RawMessage{"rapidFollowupPreempt": json.RawMessage("true")}}}}},
		{"initialize without a system prompt", `{"type":"control_request","request_id":"a","request":{"subtype":"initialize","appendSystemPrompt":"more"}}`,
			&ControlRequest{RequestID: "a", Request: &InitializeRequest{AppendSystemPrompt: "more"}}},
		{"set_model reset", `{"type":"control_request","request_id":"b","request":{"subtype":"set_model"}}`,
			&ControlRequest{RequestID: "b", Request: &SetModelRequest{}}},
		{"set_max_thinking_tokens", `{"type":"control_request","request_id":"b","request":{"subtype":"set_max_thinking_tokens","max_thinking_tokens":2048}}`,
			&ControlRequest{RequestID: "b", Request: &SetMaxThinkingTokensRequest{MaxThinkingTokens: ptr(2048)}}},
		{"can_use_tool", `{"type":"control_request","request_id":"c","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/x"},"tool_use_id":"toolu_1","permission_suggestions":[]}}`,
			&ControlRequest{RequestID: "c", Request: &CanUseToolRequest{ToolName: "Write", Input: json.RawMessage(`{"file_path":"/x"}`),
				ToolUseID: "toolu_1", PermissionSuggestions: json.RawMessage(`[]`)}}},
		{"unknown subtype", `{"type":"control_request","request_id":"d","request":{"subtype":"frobnicate","n":1}}`,
			&ControlRequest{RequestID: "d", Request: &OtherRequest{Name: "frobnicate", Fields: map[string]json.RawMessage{"n": json.RawMessage("1")}}}},
		{"success with payload", `{"type":"control_response","response":{"subtype":"success","request_id":"e","response":{"mode":"plan"},"pending_permission_requests":[]}}`,
			&ControlResponse{RequestID: "e", Response: json.RawMessage(`{"mode":"plan"}`), Extra: map[string]json.RawMessage{"pending_permission_requests": json.RawMessage("[]")}}},
		{"error", `{"type":"control_response","response":{"subtype":"error","request_id":"f","error":"no","error_code":"unsupported_request"}}`,
			&ControlResponse{RequestID: "f", IsError: true, Error: "no", ErrorCode: ErrorCodeUnsupported}},
		{"cancel", `{"type":"control_cancel_request","request_id":"g"}`, &ControlCancel{RequestID: "g"}},
		{"keep alive", "{\"type\":\"keep_alive\"}\n", &KeepAlive{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, rawCmp, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeErrorFields: a bad control_request keeps the id and subtype
// it could read, so that the engine can still answer it.
func TestDecodeErrorFields(t *testing.T) {
	cases := []struct {
		line string
		want DecodeError
	}{
		{`{"type":"control_request","request_id":"r1","request":{"subtype":"set_permission_mode"}}`,
			DecodeError{Type: "control_request", Subtype: "set_permission_mode", RequestID: "r1", Field: "request.mode", Reason: "is missing"}},
		{`{"type":"control_request","request_id":"r2","request":{"subtype":"initialize","hooks":{"Stop":[{"hookCallbackIds":[1]}]}}}`,
			DecodeError{Type: "control_request", Subtype: "initialize", RequestID: "r2", Field: "request.hooks.hookCallbackIds", Reason: "want a string, got number"}},
		{`{"type":"control_response","response":{"subtype":"nope","request_id":"r3"}}`,
			DecodeError{Type: "control_response", RequestID: "r3", Field: "response.subtype", Reason: `want success or error, got "nope"`}},
		{`{"type":"user","message":{"role":"user","content":[{"type":"text"},{}]}}`,
			DecodeError{Type: "user", Field: "message.content[1].type", Reason: "is missing"}},
		{`{"type":"x` + strings.Repeat("y", 100) + `"}`,
			DecodeError{Field: "type", Reason: `unknown line type "xyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"… (want user, control_request, control_response, control_cancel_request or keep_alive)`}},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.line))
		de, ok := err.(*DecodeError)
		if !ok {
			t.Errorf("%s: error %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, *de); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.line, diff)
		}
	}
}

// TestEncodeEngineSide: what the engine writes to the host.
func TestEncodeEngineSide(t *testing.T) {
	init, err := Success("1o6az66lrw2", &InitializeResponse{
		Commands: []Command{{Name: "compact", Description: "Summarise the conversation"}}, Agents: []AgentInfo{},
		OutputStyle: "default", AvailableOutputStyles: []string{"default"}, Models: []ModelInfo{{Value: "default", DisplayName: "Default"}},
		Account: Account{APIKeySource: "ANTHROPIC_API_KEY"}, PID: 42, Version: "0.1.0", CurrentPermissionMode: "default",
		HookOnFailureSupported: true, HooksApplied: ptr(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"initialize answer", init, `{"response":{"request_id":"1o6az66lrw2","response":{"commands":[{"name":"compact","description":"Summarise the conversation","argumentHint":""}],"agents":[],"output_style":"default","available_output_styles":["default"],"models":[{"value":"default","displayName":"Default","description":""}],"account":{"apiKeySource":"ANTHROPIC_API_KEY"},"pid":42,"claude_code_version":"0.1.0","current_permission_mode":"default","hook_on_failure_supported":true,"hooks_applied":true},"subtype":"success"},"type":"control_response"}`},
		{"unsupported", Unsupported("r14", "frobnicate"),
			`{"response":{"error":"Unsupported control request subtype: frobnicate","error_code":"unsupported_request","request_id":"r14","subtype":"error"},"type":"control_response"}`},
		{"empty success", &ControlResponse{RequestID: "r3"}, `{"response":{"request_id":"r3","subtype":"success"},"type":"control_response"}`},
		{"can_use_tool", &ControlRequest{RequestID: "0f878e54", Request: &CanUseToolRequest{ToolName: "Write", Input: json.RawMessage(`{"file_path":"<cwd>/out.txt"}`), ToolUseID: "toolu_1"}},
			`{"request":{"input":{"file_path":"<cwd>/out.txt"},"subtype":"can_use_tool","tool_name":"Write","tool_use_id":"toolu_1"},"request_id":"0f878e54","type":"control_request"}`},
		{"hook_callback", &ControlRequest{RequestID: "h", Request: &HookCallbackRequest{CallbackID: "hook_0", Input: json.RawMessage(`{"hook_event_name":"Stop"}`)}},
			`{"request":{"callback_id":"hook_0","input":{"hook_event_name":"Stop"},"subtype":"hook_callback"},"request_id":"h","type":"control_request"}`},
		{"cancel", &ControlCancel{RequestID: "h"}, `{"request_id":"h","type":"control_cancel_request"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			back, err := Decode(got)
			if err != nil {
				t.Fatalf("decoding it again: %v", err)
			}
			if again, _ := Encode(back); string(again) != string(got) {
				t.Errorf("not stable:\n%s%s", got, again)
			}
		})
	}
	if _, err := Encode(&ControlRequest{RequestID: "x"}); err == nil {
		t.Error("a request without a body encoded")
	}
}

// TestPermissionResult: the answers of wire-protocol.md §5.1 to a
// can_use_tool request, and bad ones.
func TestPermissionResult(t *testing.T) {
	ok := []struct {
		payload string
		want    PermissionResult
	}{
		{`{"behavior":"allow","updatedInput":{"file_path":"/c"},"toolUseID":"toolu_1"}`,
			PermissionResult{Behavior: "allow", UpdatedInput: json.RawMessage(`{"file_path":"/c"}`), ToolUseID: "toolu_1"}},
		{`{"behavior":"deny","message":"No writes today","interrupt":false,"toolUseID":"toolu_1"}`,
			PermissionResult{Behavior: "deny", Message: "No writes today", ToolUseID: "toolu_1"}},
		{`{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`,
			PermissionResult{Behavior: "allow", UpdatedPermissions: json.RawMessage(`[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`)}},
	}
	for _, tc := range ok {
		got, err := DecodePermissionResult(json.RawMessage(tc.payload))
		if err != nil {
			t.Errorf("%s: %v", tc.payload, err)
			continue
		}
		if diff := cmp.Diff(tc.want, *got, rawCmp); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.payload, diff)
		}
	}
	bad := map[string]string{
		`{"behavior":"maybe"}`:                  `behavior: want allow or deny, got "maybe"`,
		`{"behavior":"deny"}`:                   "message: is missing",
		`{"message":"x"}`:                       "behavior: is missing",
		`{"behavior":"allow","updatedInput":1}`: "updatedInput: want an object, got number",
		`[]`:                                    "want an object, got array",
	}
	for payload, want := range bad {
		_, err := DecodePermissionResult(json.RawMessage(payload))
		if err == nil || err.Error() != "wire: permission result: "+want {
			t.Errorf("%s: error %v, want %q", payload, err, want)
		}
	}
	mcp, err := DecodeMCPResponse(json.RawMessage(`{"mcp_response":{"jsonrpc":"2.0","result":{},"id":0}}`))
	if err != nil || string(mcp) != `{"jsonrpc":"2.0","result":{},"id":0}` {
		t.Errorf("mcp response %s, %v", mcp, err)
	}
	if _, err := DecodeMCPResponse(json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "mcp_response: is missing") {
		t.Errorf("empty mcp answer: %v", err)
	}
}

// TestSubtypes: every subtype the spec names is known, in its direction.
func TestSubtypes(t *testing.T) {
	for _, s := range []string{"initialize", "interrupt", "set_permission_mode", "set_model", "set_max_thinking_tokens",
		"mcp_status", "get_context_usage", "rewind_files", "get_settings", "mcp_message"} {
		if d, ok := KnownSubtype(s); !ok || d&HostToEngine == 0 {
			t.Errorf("%s: %v %v", s, d, ok)
		}
	}
	for _, s := range []string{"can_use_tool", "hook_callback", "mcp_message", "elicitation", "request_user_dialog", "oauth_token_refresh"} {
		if d, ok := KnownSubtype(s); !ok || d&EngineToHost == 0 {
			t.Errorf("%s: %v %v", s, d, ok)
		}
	}
	if _, ok := KnownSubtype("frobnicate"); ok {
		t.Error("frobnicate is known")
	}
	host, engine := Subtypes(HostToEngine), Subtypes(EngineToHost)
	if len(host) < 50 || len(engine) < 10 {
		t.Errorf("%d host subtypes, %d engine subtypes", len(host), len(engine))
	}
}

// TestSpecSubtypesKnown: the subtypes wire-protocol.md and sdk-surface.md
// §G name are all known, so none is mistaken for a typo.
func TestSpecSubtypesKnown(t *testing.T) {
	named := strings.Fields(`initialize interrupt set_permission_mode set_model set_max_thinking_tokens
		apply_flag_settings update_settings get_settings get_hooks_listing get_task_output list_permission_rules
		rewind_files cancel_async_message seed_read_state set_cwd stop_task background_tasks mcp_status
		mcp_reconnect mcp_toggle mcp_read_resource mcp_set_servers mcp_call mcp_message mcp_authenticate
		mcp_clear_auth mcp_oauth_callback_url channel_enable reload_plugins reload_skills reload_output_styles
		rename_session generate_session_title side_question submit_feedback get_usage get_status
		get_context_usage get_session_cost list_models get_binary_version export_conversation read_file
		file_suggestions get_plan claim_session remote_control message_rated set_mcp_permission_mode_override
		set_chrome_browser_hints set_prompt_suggestions_paused prompt_draft_activity ultrareview_launch
		claude_authenticate claude_oauth_callback claude_oauth_wait_for_completion set_color
		set_has_subscribers register_repo_root
		can_use_tool hook_callback elicitation request_user_dialog oauth_token_refresh host_auth_token_refresh
		remote_control_work_secret ui_copy ui_prompt_read ui_prompt_fill ui_prompt_paint ui_prompt_suggest
		ui_read_selection remote_tool_call remote_plumbing_call remote_tools_probe remote_tools_reannounce`)
	for _, s := range named {
		if _, ok := KnownSubtype(s); !ok {
			t.Errorf("%s is not known", s)
		}
	}
	if n := len(Subtypes(Both)); n != len(named) {
		t.Errorf("%d subtypes known, %d named in the spec", n, len(named))
	}
}
