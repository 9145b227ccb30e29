package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestStreamJSONFlags: stream-json input and the flags that go with it
// are accepted as the SDKs pass them, and refused where they cannot work.
func TestStreamJSONFlags(t *testing.T) {
	ok := []struct {
		args []string
		want func(*sdkFlags) bool
	}{
		{[]string{"--input-format=stream-json"}, func(f *sdkFlags) bool { return f.inputFormat == "stream-json" }},
		{[]string{"--permission-prompt-tool=stdio"}, func(f *sdkFlags) bool { return f.permissionPromptTool == "stdio" }},
		{[]string{"--permission-prompt-tool", "stdio"}, func(f *sdkFlags) bool { return f.permissionPromptTool == "stdio" }},
		{[]string{"--permission-prompt-tool", "mcp__perm__ask"}, func(f *sdkFlags) bool { return f.permissionPromptTool == "mcp__perm__ask" }},
		{[]string{"--await-initialize", "--initialize-fields=settings,disallowedTools"}, func(f *sdkFlags) bool { return f.awaitInit }},
		{[]string{"--replay-user-messages"}, func(f *sdkFlags) bool { return f.replayUser }},
		{[]string{"--managed-settings-in-initialize"}, func(*sdkFlags) bool { return true }},
	}
	for _, tc := range ok {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := parseArgs(append(slices.Clone(sdkArgs), tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.warnings) != 0 || !tc.want(&c.sdk) {
				t.Errorf("warnings %q, flags %+v", c.warnings, c.sdk)
			}
		})
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"-p", "hi", "--input-format", "stream-json", "--verbose"}, "--input-format stream-json needs --output-format stream-json"},
		{append(slices.Clone(sdkArgs), "a prompt"), "takes no prompt argument"},
		{[]string{"-p", "hi", "--permission-prompt-tool=stdio"}, "--permission-prompt-tool stdio needs --input-format stream-json"},
		{append(slices.Clone(sdkArgs), "--permission-prompt-tool=approve"), "want stdio or an MCP tool name"},
	}
	for _, tc := range bad {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestStreamJSONInitializeDelivery: with --await-initialize a user line
// written before initialize waits for it; settings, disallowedTools and
// mcpServers delivered in initialize are applied and their *_applied
// answers say so; title becomes one system/session_title_changed line;
// fields not honoured are warned about.
func TestStreamJSONInitializeDelivery(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	s := startSJ(t, srv, "--await-initialize", "--initialize-fields=settings,disallowedTools")
	s.send(userLine("held"))
	s.send(initLine("init1", `"settings":{"permissions":{"deny":["WebFetch"]}},"disallowedTools":["WebSearch"],"mcpServers":{},"title":"T","managedSettings":{}`))
	ans := s.until(`"request_id":"init1"`)
	for _, want := range []string{`"settings_applied":true`, `"disallowed_tools_applied":true`, `"mcp_servers_applied":true`, `"managed_settings_applied":false`} {
		if !strings.Contains(ans, want) {
			t.Errorf("initialize answer %s, want %s", ans, want)
		}
	}
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if got := srv.Requests()[0].ToolNames(); slices.Contains(got, "WebSearch") {
		t.Errorf("tools sent %q include WebSearch, disallowed in initialize", got)
	}
	errOut := s.stderr.String()
	for _, want := range []string{"initialize: managedSettings (managed_settings_applied is false) is ignored"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	}
	if strings.Contains(errOut, "title") {
		t.Errorf("stderr %q warns about title, which is honoured", errOut)
	}
	var titles []string
	for _, l := range s.seen {
		if strings.Contains(l, `"subtype":"session_title_changed"`) {
			titles = append(titles, l)
		}
	}
	if len(titles) != 1 || !strings.Contains(titles[0], `"title":"T"`) {
		t.Errorf("session_title_changed lines %q; want one with title T", titles)
	}
}

// TestStreamJSONWithoutInitialize: a host that never initializes (its
// first line is a user message) gets a session from the flags alone; a
// late initialize is refused.
func TestStreamJSONWithoutInitialize(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("no init needed"))
	s := startSJ(t, srv)
	s.send(userLine("hi"))
	s.until(`"type":"result"`)
	s.send(initLine("late", ""))
	ans := s.until(`"request_id":"late"`)
	if !strings.Contains(ans, `"subtype":"error"`) || !strings.Contains(ans, "first line") {
		t.Errorf("late initialize answered %s", ans)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
}

// TestStreamJSONHookCallback: a hook registered in initialize is called
// on the host as hook_callback, and its answer is used.
func TestStreamJSONHookCallback(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("hooked"))
	s := startSJ(t, srv)
	s.send(initLine("init1", `"hooks":{"UserPromptSubmit":[{"hookCallbackIds":["hook_0"]}]}`))
	ans := s.until(`"request_id":"init1"`)
	if !strings.Contains(ans, `"hooks_applied":true`) {
		t.Errorf("initialize answer %s, want hooks_applied", ans)
	}
	s.send(userLine("prompt"))
	req := s.until(`"subtype":"hook_callback"`)
	var r struct {
		RequestID string `json:"request_id"`
		Request   struct {
			CallbackID string `json:"callback_id"`
		} `json:"request"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil || r.Request.CallbackID != "hook_0" {
		t.Fatalf("hook_callback %s (%v)", req, err)
	}
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CONTEXT-FROM-HOST"}}}}`)
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	body, _ := json.Marshal(srv.Requests()[0].Field("messages"))
	if !strings.Contains(string(body), "CONTEXT-FROM-HOST") {
		t.Errorf("the hook's additional context was not sent: %s", body)
	}
}

// TestStreamJSONSIGTERM: SIGTERM mid-turn, with stdin still open, ends the
// command promptly with 143 and writes nothing more (no result line), as
// the reference does.
func TestStreamJSONSIGTERM(t *testing.T) {
	reply, arrived := stalled()
	srv := agentlooptest.NewTB(t, reply)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Chdir(t.TempDir())
	inR, inW := io.Pipe()
	defer inW.Close()
	go func() {
		io.WriteString(inW, initLine("init1", "")+"\n"+userLine("wait")+"\n")
	}()
	sigs := make(chan os.Signal, 1)
	go func() {
		<-arrived
		sigs <- syscall.SIGTERM
	}()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() { done <- runSignalled(sigs, func() {}, slices.Clone(sdkArgs), inR, &out, &errOut) }()
	select {
	case code := <-done:
		if code != 143 {
			t.Errorf("exit %d, want 143; stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end after SIGTERM")
	}
	if strings.Contains(out.String(), `"type":"result"`) {
		t.Errorf("stdout %q, want no result line after SIGTERM, as the reference", out.String())
	}
}

// TestStreamJSONOtherControls: get_context_usage, rewind_files,
// mcp_reconnect and cancel_async_message are answered.
func TestStreamJSONOtherControls(t *testing.T) {
	slow := agentlooptest.Text("slow")
	slow.Delay = 2 * time.Second
	srv := agentlooptest.NewTB(t, slow, agentlooptest.Text("kept"))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	s.send(`{"request_id":"c1","type":"control_request","request":{"subtype":"get_context_usage"}}`)
	if ans := s.until(`"request_id":"c1"`); !strings.Contains(ans, `"subtype":"success"`) || !strings.Contains(ans, `"categories"`) {
		t.Errorf("get_context_usage answered %s", ans)
	}
	s.send(`{"request_id":"c2","type":"control_request","request":{"subtype":"rewind_files","user_message_id":"00000000-0000-4000-8000-00000000dead","dry_run":true}}`)
	if ans := s.until(`"request_id":"c2"`); !strings.Contains(ans, `"request_id":"c2"`) {
		t.Errorf("rewind_files answered %s", ans)
	}
	s.send(`{"request_id":"c3","type":"control_request","request":{"subtype":"mcp_reconnect","serverName":"nope"}}`)
	if ans := s.until(`"request_id":"c3"`); !strings.Contains(ans, `"subtype":"error"`) || !strings.Contains(ans, "nope") {
		t.Errorf("mcp_reconnect of an unknown server answered %s", ans)
	}
	s.send(userLine("slow turn"))
	s.until(`"subtype":"init"`)
	s.send(`{"type":"user","message":{"role":"user","content":"withdrawn"},"parent_tool_use_id":null,"session_id":"","uuid":"00000000-0000-4000-8000-0000000000aa"}`)
	s.send(`{"type":"user","message":{"role":"user","content":"kept"},"parent_tool_use_id":null,"session_id":""}`)
	s.send(`{"request_id":"c4","type":"control_request","request":{"subtype":"cancel_async_message","message_uuid":"00000000-0000-4000-8000-0000000000aa"}}`)
	if ans := s.until(`"request_id":"c4"`); !strings.Contains(ans, `"cancelled":true`) {
		t.Errorf("cancel_async_message answered %s", ans)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if n := srv.Len(); n != 2 || srv.Requests()[1].LastUserText() != "kept" {
		t.Errorf("%d requests; the withdrawn message must not run", n)
	}
}

// TestStreamJSONSDKMCPServer: an in-process MCP server of the host,
// declared in initialize (the TypeScript SDK) or in --mcp-config as type
// "sdk" (the Python SDK), is reached over mcp_message.
func TestStreamJSONSDKMCPServer(t *testing.T) {
	t.Run("manifests", func(t *testing.T) { testSDKMCPServer(t, "manifests") })
	t.Run("handshake", func(t *testing.T) { testSDKMCPServer(t, "handshake") })
	t.Run("mcp-config", func(t *testing.T) { testSDKMCPServer(t, "mcp-config") })
}

func testSDKMCPServer(t *testing.T, declared string) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{"a": 2, "b": 3}),
		agentlooptest.Text("five"))
	args := []string{"--allowedTools", "mcp__calc__add"}
	if declared == "mcp-config" {
		args = append(args, "--mcp-config", `{"mcpServers":{"calc":{"type":"sdk","name":"calc"}}}`)
	}
	s := startSJ(t, srv, args...)
	initResult := `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"calc","version":"1.0.0"}}`
	toolsResult := `{"tools":[{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}`
	switch declared {
	case "manifests":
		s.send(initLine("init1", `"sdkMcpServers":["calc"],"sdkMcpServerManifests":{"calc":{"initializeResult":`+initResult+`,"toolsListResult":`+toolsResult+`}}`))
	case "handshake":
		s.send(initLine("init1", `"sdkMcpServers":["calc"]`))
	default:
		s.send(initLine("init1", ""))
	}
	// The fake host answers every mcp_message until a line with stop.
	serve := func(stop ...string) {
		for {
			l := s.until(`"type":`)
			if containsAll(l, stop) {
				return
			}
			if !strings.Contains(l, `"subtype":"mcp_message"`) {
				continue
			}
			var r struct {
				RequestID string `json:"request_id"`
				Request   struct {
					Message struct {
						ID     *json.RawMessage `json:"id"`
						Method string           `json:"method"`
					} `json:"message"`
				} `json:"request"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			id := "0"
			if r.Request.Message.ID != nil {
				id = string(*r.Request.Message.ID)
			}
			result := `{}`
			switch r.Request.Message.Method {
			case "initialize":
				result = initResult
			case "tools/list":
				result = toolsResult
			case "tools/call":
				result = `{"content":[{"type":"text","text":"sum=5"}]}`
			}
			s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"mcp_response":{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}}}}`)
		}
	}
	s.send(userLine("add 2 and 3"))
	serve(`"type":"result"`)
	// Reconnecting a host server needs the host again (without manifests).
	s.send(`{"request_id":"rc1","type":"control_request","request":{"subtype":"mcp_reconnect","serverName":"calc"}}`)
	serve(`"request_id":"rc1"`)
	if l := s.seen[len(s.seen)-1]; !strings.Contains(l, `"subtype":"success"`) {
		t.Errorf("mcp_reconnect answered %s", l)
	}
	// A message the host's server starts (a ping) reaches the engine's
	// client, whose answer goes back as mcp_response.
	s.send(`{"request_id":"hm1","type":"control_request","request":{"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0","id":9,"method":"ping"}}}`)
	serve(`"request_id":"hm1"`)
	if l := s.seen[len(s.seen)-1]; !containsAll(l, []string{`"subtype":"success"`, `"mcp_response"`, `"id":9`, `"result"`}) {
		t.Errorf("host mcp_message answered %s", l)
	}
	s.send(`{"request_id":"hm2","type":"control_request","request":{"subtype":"mcp_message","server_name":"nosuch","message":{"jsonrpc":"2.0","id":10,"method":"ping"}}}`)
	serve(`"request_id":"hm2"`)
	if l := s.seen[len(s.seen)-1]; !containsAll(l, []string{`"subtype":"error"`, `nosuch`}) {
		t.Errorf("mcp_message for an unknown server answered %s", l)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if len(srv.Requests()) < 2 {
		t.Fatalf("%d requests", len(srv.Requests()))
	}
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if b, _ := json.Marshal(res); !ok || !strings.Contains(string(b), "sum=5") {
		t.Errorf("tool result %s, want sum=5; stderr %q", b, s.stderr.String())
	}
}

// TestStreamJSONInterruptPendingPermission: an interrupt while a
// can_use_tool request is pending withdraws it with
// control_cancel_request; the host's late answer is dropped quietly.
func TestStreamJSONInterruptPendingPermission(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": "x.txt", "content": "x\n"}),
		agentlooptest.Text("next turn"))
	s := startSJ(t, srv, "--permission-prompt-tool=stdio")
	s.send(initLine("init1", ""))
	s.send(userLine("write"))
	req := s.until(`"subtype":"can_use_tool"`)
	var r struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
	s.until(`"type":"control_cancel_request"`, r.RequestID)
	s.until(`"request_id":"int1"`)
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"behavior":"allow","updatedInput":{}}}}`)
	s.send(userLine("again"))
	s.until(`"subtype":"success"`, `"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "not pending") {
		t.Errorf("the late answer was reported: %q", s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(s.dir, "x.txt")); err == nil {
		t.Error("the interrupted call ran")
	}
	all := strings.Join(s.seen, "\n")
	if !strings.Contains(all, `"subtype":"error_during_execution"`) {
		t.Error("no error result for the interrupted turn")
	}
}

// FuzzStreamJSONStdin: whatever the host writes, the driver neither
// panics nor hangs, and it exits 0 or 1.
func FuzzStreamJSONStdin(f *testing.F) {
	f.Add(initLine("i", "") + "\n" + userLine("hi") + "\n")
	f.Add(`{"type":"user","message":{"role":"user","content":[]}}` + "\n" + `{"type":"control_request","request_id":"x","request":{"subtype":"interrupt"}}`)
	f.Add(`{"type":"control_response","response":{"subtype":"error","request_id":"zz","error":"no"}}` + "\n{\n\x00\n")
	f.Add(initLine("i", `"hooks":{"Nope":[{"hookCallbackIds":["h"]}]}`) + "\n")
	f.Add(`{"type":"control_request","request_id":"q","request":{"subtype":"set_model","model":null}}` + "\n" + `{"type":"keep_alive"}`)
	srv := agentlooptest.NewTB(f)
	srv.AllowExhausted()
	srv.Lenient()
	f.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	f.Setenv("ANTHROPIC_API_KEY", "sk-test")
	f.Chdir(f.TempDir())
	f.Fuzz(func(t *testing.T, stdin string) {
		done := make(chan int, 1)
		var out, errOut lockedBuffer
		go func() {
			done <- run(context.Background(), slices.Clone(sdkArgs), strings.NewReader(stdin), &out, &errOut)
		}()
		select {
		case code := <-done:
			if code != 0 && code != 1 {
				t.Errorf("exit %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no exit for stdin %q; stderr %q", stdin, errOut.String())
		}
	})
}

// TestStreamJSONStartupFailure: a session that cannot start (an unknown
// --resume id) gets no initialize answer: the reason on stderr and as an
// error result, exit 1.
func TestStreamJSONStartupFailure(t *testing.T) {
	for _, creds := range []bool{true, false} {
		t.Run(map[bool]string{true: "with credentials", false: "without credentials"}[creds], func(t *testing.T) {
			streamJSONStartupFailure(t, creds)
		})
	}
}

// streamJSONStartupFailure is TestStreamJSONStartupFailure with or
// without credentials: the unknown session is reported either way, not
// the missing credentials.
func streamJSONStartupFailure(t *testing.T, creds bool) {
	srv := agentlooptest.NewTB(t)
	s := startSJ(t, srv, "--resume", "11111111-1111-4111-8111-111111111111")
	if !creds {
		t.Setenv("ANTHROPIC_API_KEY", "")
		t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	}
	s.send(initLine("init1", ""))
	if code := s.finish(); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if k := kinds(t, s.seen); !slices.Equal(k, []string{"result/error_during_execution"}) {
		t.Errorf("lines %q, want one error result", k)
	}
	if !strings.Contains(s.stderr.String(), "No conversation found with session ID: 11111111-1111-4111-8111-111111111111") || srv.Len() != 0 {
		t.Errorf("stderr %q, %d requests", s.stderr.String(), srv.Len())
	}
}
