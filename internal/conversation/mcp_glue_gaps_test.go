package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSubagentFollowsTools: a running subagent gets the tools its
// server adds from its next request (less its disallowedTools), and a
// subagent started after the change gets them too (within its tools list).
func TestMCPSubagentFollowsTools(t *testing.T) {
	inproc := sdk.NewServer(&sdk.Implementation{Name: "grow", Version: "1"}, nil)
	textTool(inproc, "a", "a ran")
	var c *agentloop.Client
	grow := tool.New("grow_more", "Adds tools c and d to the grow server", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
		textTool(inproc, "c", "c ran")
		textTool(inproc, "d", "d ran")
		waitMCPTool(t, c, "grow", "mcp__grow__c")
		waitMCPTool(t, c, "grow", "mcp__grow__d")
		return tool.Text("grown"), nil
	}, nil)
	srv := agentlooptest.NewTB(t,
		// Query one: the worker subagent (all its parent's tools but d)
		// grows the server while it runs.
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Grow", "prompt": "Grow.", "subagent_type": "worker"}),
		agentlooptest.ToolUse("toolu_g", "grow_more", map[string]any{}),
		agentlooptest.Text("grown"),
		agentlooptest.Text("done"),
		// Query two: a picky subagent started after the change.
		agentlooptest.ToolUse("toolu_p", "Agent", map[string]any{"description": "Pick", "prompt": "Pick.", "subagent_type": "picky"}),
		agentlooptest.Text("picked"),
		agentlooptest.Text("done"))
	var err error
	c, err = agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Agent"}, ToolSearch: agentloop.ToolSearchOff,
		CustomTools:  []tool.Tool{grow},
		AllowedTools: []string{"mcp__grow", "grow_more"}, SettingSources: []settings.SettingSource{},
		Agents: map[string]agentloop.AgentDefinition{
			"worker": {Description: "Works", Prompt: "You work.", DisallowedTools: []string{"mcp__grow__d"}},
			"picky":  {Description: "Picks", Prompt: "You pick.", Tools: []string{"mcp__grow__c", "mcp__grow__a"}},
		},
		MCPServers:   map[string]agentloop.MCPServerConfig{"grow": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	query(t, c, "one")
	query(t, c, "two")
	reqs := srv.Requests()
	if got := reqs[1].ToolNames(); !slices.Contains(got, "mcp__grow__a") || slices.Contains(got, "mcp__grow__c") {
		t.Errorf("worker's first request declares %v, want mcp__grow__a and not yet c", got)
	}
	if got := reqs[2].ToolNames(); !slices.Contains(got, "mcp__grow__c") || slices.Contains(got, "mcp__grow__d") {
		t.Errorf("worker's request after the change declares %v, want mcp__grow__c and not its disallowed d", got)
	}
	got := reqs[5].ToolNames()
	slices.Sort(got)
	if want := []string{"mcp__grow__a", "mcp__grow__c"}; !slices.Equal(got, want) {
		t.Errorf("picky subagent started after the change declares %v, want %v", got, want)
	}
}

// TestMCPRetriesFailedServer: a server whose command is missing at start
// is failed; once the command exists it is reconnected in the background,
// without ReconnectMCPServer, and its tools are declared from the next
// request and run.
func TestMCPRetriesFailedServer(t *testing.T) {
	bin := mcpServerBinary(t)
	late := filepath.Join(t.TempDir(), "late-server")
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("done"),
		agentlooptest.ToolUse("toolu_1", "mcp__late__echo", map[string]any{"text": "x"}),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__late"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"late": {Command: late}},
		MCPConnector: mcp.Connector{RetryBackoff: 50 * time.Millisecond, RetryAttempts: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if st := c.MCPStatus(); len(st) != 1 || st[0].Status != tool.MCPFailed {
		t.Fatalf("status at start = %+v, want failed", st)
	}
	query(t, c, "one")
	if err := os.Symlink(bin, late); err != nil {
		t.Fatal(err)
	}
	waitMCPTool(t, c, "late", "mcp__late__echo")
	if st := c.MCPStatus(); st[0].Status != tool.MCPConnected {
		t.Fatalf("status after the retry = %+v, want connected", st)
	}
	query(t, c, "two")
	if d, _ := offered(srv, 1, "mcp__late__echo"); !d {
		t.Errorf("after the retry the request declares %v, want mcp__late__echo", srv.Requests()[1].ToolNames())
	}
	if r := mcpResult(t, srv, "toolu_1"); mcpText(r) != "echo: x" {
		t.Errorf("call after the retry = %+v", r)
	}
}

// mcpDiagText are the texts of the stream's diagnostics with tag.
func mcpDiagText(msgs []agentloop.Message, tag string) string {
	var out []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == tag {
			out = append(out, d.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestMCPToolPoliciesInSession: the per-tool policies of a server's
// configuration and a tool's requiresUserInteraction reach the permission
// check; policies the session does not honour are reported.
func TestMCPToolPoliciesInSession(t *testing.T) {
	inproc := sdk.NewServer(&sdk.Implementation{Name: "ops", Version: "1"}, nil)
	for _, n := range []string{"drop", "check", "open", "login"} {
		tl := &sdk.Tool{Name: n}
		if n == "login" {
			tl.Meta = sdk.Meta{"anthropic/requiresUserInteraction": true}
		}
		sdk.AddTool(inproc, tl, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: n + " ran"}}}, nil, nil
		})
	}
	cfg := mcp.InProcess(inproc)
	cfg.Tools = []agentloop.MCPToolPolicy{
		{Name: "drop", PermissionPolicy: tool.MCPAlwaysDeny},
		{Name: "check", PermissionPolicy: tool.MCPAlwaysAsk, OrgMaxPermission: "ask"},
		{Name: "open", PermissionPolicy: tool.MCPAlwaysAllow},
	}
	var mu sync.Mutex
	var asked []string
	allowHook := map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: {{Matcher: "mcp__ops__login", Hooks: []hooks.Callback{
		func(context.Context, hooks.Input, string) (hooks.Output, error) {
			return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) { o.PermissionDecision = hooks.Allow }), nil
		}}}}}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_drop", "mcp__ops__drop", map[string]any{}),
		agentlooptest.ToolUse("toolu_check", "mcp__ops__check", map[string]any{}),
		agentlooptest.ToolUse("toolu_open", "mcp__ops__open", map[string]any{}),
		agentlooptest.ToolUse("toolu_login", "mcp__ops__login", map[string]any{}),
		agentlooptest.Text("done"))
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__ops"}, SettingSources: []settings.SettingSource{}, Hooks: allowHook,
		CanUseTool: func(_ context.Context, r agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.ToolName)
			return agentloop.PermissionResult{Behavior: "deny", Message: "asked and refused"}, nil
		},
		MCPServers:   map[string]agentloop.MCPServerConfig{"ops": cfg},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"toolu_drop":  "always_deny",       // denied although an allow rule matches
		"toolu_check": "asked and refused", // asked although an allow rule matches
		"toolu_open":  "open ran",          // always_allow is not honoured on an sdk server, the allow rule is
		"toolu_login": "asked and refused", // a hook allow cannot skip the callback
	} {
		if got := mcpText(mcpResult(t, srv, id)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"mcp__ops__check", "mcp__ops__login"}; !slices.Equal(asked, want) {
		t.Errorf("CanUseTool asked about %v, want %v", asked, want)
	}
	diags := mcpDiagText(msgs, agentloop.DiagMCP)
	for _, want := range []string{"org_max_permission \"ask\" is not honoured", "always_allow is not honoured on an sdk server"} {
		if !strings.Contains(diags, want) {
			t.Errorf("diagnostics %q, want one saying %q", diags, want)
		}
	}
}

// TestMCPRequiresUserInteractionDontAsk: in dontAsk mode a tool that
// requires user interaction is denied even though an allow rule matches,
// and the callback is not asked.
func TestMCPRequiresUserInteractionDontAsk(t *testing.T) {
	inproc := sdk.NewServer(&sdk.Implementation{Name: "ui", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "login", Meta: sdk.Meta{"anthropic/requiresUserInteraction": true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged in"}}}, nil, nil
		})
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "mcp__ui__login", map[string]any{}), agentlooptest.Text("done"))
	called := false
	if _, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		PermissionMode: agentloop.PermissionMode("dontAsk"),
		AllowedTools:   []string{"mcp__ui"}, SettingSources: []settings.SettingSource{},
		CanUseTool: func(context.Context, agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			called = true
			return agentloop.PermissionResult{Behavior: "allow"}, nil
		},
		MCPServers:   map[string]agentloop.MCPServerConfig{"ui": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	}); err != nil {
		t.Fatal(err)
	}
	if r := mcpResult(t, srv, "toolu_1"); r.IsError == nil || !*r.IsError || strings.Contains(mcpText(r), "logged in") {
		t.Errorf("result = %+v, want a denial", r)
	}
	if called {
		t.Error("CanUseTool was asked in dontAsk mode")
	}
}

// TestMCPEnvLimits: $MCP_TOOL_TIMEOUT bounds a call of a server with no
// timeout of its own, and $MAX_MCP_OUTPUT_TOKENS cuts a long result (and
// is reported).
func TestMCPEnvLimits(t *testing.T) {
	t.Setenv("MCP_TOOL_TIMEOUT", "1000")
	t.Setenv("MAX_MCP_OUTPUT_TOKENS", "50")
	inproc := sdk.NewServer(&sdk.Implementation{Name: "env", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "slow"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finally"}}}, nil, nil
		}
	})
	sdk.AddTool(inproc, &sdk.Tool{Name: "long"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("z", 1000)}}}, nil, nil
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_slow", "mcp__env__slow", map[string]any{}),
		agentlooptest.ToolUse("toolu_long", "mcp__env__long", map[string]any{}),
		agentlooptest.Text("done"))
	start := time.Now()
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__env"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"env": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v with MCP_TOOL_TIMEOUT=1000", d)
	}
	if r := mcpResult(t, srv, "toolu_slow"); r.IsError == nil || !*r.IsError || !strings.Contains(mcpText(r), "within 1s") {
		t.Errorf("slow call = %+v, want the timeout", r)
	}
	long := mcpText(mcpResult(t, srv, "toolu_long"))
	if n := strings.Count(long, "z"); n != 200 || !strings.Contains(long, "output was cut") {
		t.Errorf("long result kept %d of 1000 characters (%q), want 200 and a note", n, long)
	}
	if d := mcpDiagText(msgs, agentloop.DiagMCP); !strings.Contains(d, "over the limit of 50") {
		t.Errorf("diagnostics %q, want the cut reported", d)
	}
}

// TestParseMCPConfigToolPolicies: "tools" is read, and a bad policy is an
// error naming the server.
func TestParseMCPConfigToolPolicies(t *testing.T) {
	got, err := agentloop.ParseMCPConfig([]byte(`{"mcpServers": {"gh": {"type": "http", "url": "https://x/mcp",
		"tools": [{"name": "delete_repo", "permission_policy": "always_deny"}, {"name": "search", "permission_policy": "always_allow", "org_max_permission": "allow"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []agentloop.MCPToolPolicy{{Name: "delete_repo", PermissionPolicy: "always_deny"},
		{Name: "search", PermissionPolicy: "always_allow", OrgMaxPermission: "allow"}}
	if !slices.Equal(got["gh"].Tools, want) {
		t.Errorf("tools = %+v, want %+v", got["gh"].Tools, want)
	}
	for _, bad := range []string{
		`{"mcpServers": {"gh": {"type": "http", "url": "u", "tools": [{"name": "x", "permission_policy": "sometimes"}]}}}`,
		`{"mcpServers": {"gh": {"type": "http", "url": "u", "tools": [{"permission_policy": "always_ask"}]}}}`,
		`{"mcpServers": {"gh": {"type": "http", "url": "u", "tools": [{"name": "x", "org_max_permission": "maybe"}]}}}`,
	} {
		if _, err := agentloop.ParseMCPConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), `"gh"`) {
			t.Errorf("%s: error %v, want one naming the server", bad, err)
		}
	}
}
