package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPClientLifecycle: MCPStatus, ToggleMCPServer and
// ReconnectMCPServer on a live client; a disabled server's calls are
// is_error results.
func TestMCPClientLifecycle(t *testing.T) {
	bin := mcpServerBinary(t)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__echo__echo", map[string]any{"text": "x"}),
		agentlooptest.Text("done"),
		agentlooptest.ToolUse("toolu_2", "mcp__echo__echo", map[string]any{"text": "y"}),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__echo"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"echo": {Command: bin}},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if st := c.MCPStatus(); len(st) != 1 || st[0].Status != tool.MCPConnected || !slices.Contains(st[0].Tools, "mcp__echo__echo") {
		t.Fatalf("status = %+v", st)
	}
	if err := c.ToggleMCPServer(ctx, "echo", false); err != nil {
		t.Fatal(err)
	}
	if st := c.MCPStatus(); st[0].Status != tool.MCPDisabled {
		t.Errorf("status after disable = %+v", st)
	}
	if _, err := c.Query(ctx, "one").Result(); err != nil {
		t.Fatal(err)
	}
	// The disabled server's tool is no longer declared: the call is one
	// of an unknown tool.
	if r := mcpResult(t, srv, "toolu_1"); r.IsError == nil || !*r.IsError || !strings.Contains(mcpText(r), "mcp__echo__echo") {
		t.Errorf("call to a disabled server = %+v", r)
	}
	if err := c.ToggleMCPServer(ctx, "echo", true); err != nil {
		t.Fatal(err)
	}
	if err := c.ReconnectMCPServer(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if st := c.MCPStatus(); st[0].Status != tool.MCPConnected {
		t.Errorf("status after enable and reconnect = %+v", st)
	}
	if _, err := c.Query(ctx, "two").Result(); err != nil {
		t.Fatal(err)
	}
	if r := mcpResult(t, srv, "toolu_2"); mcpText(r) != "echo: y" {
		t.Errorf("call after reconnect = %+v", r)
	}
	if err := c.ReconnectMCPServer(ctx, "nope"); !errors.Is(err, agentloop.ErrNoMCPServer) {
		t.Errorf("reconnect of an unknown server: %v", err)
	}
}

// TestMCPProjectConfigEnvExpansion: .mcp.json values expand ${VAR} and
// ${VAR:-default}; a server using an unset variable without a default is
// not started, with a diagnostic.
func TestMCPProjectConfigEnvExpansion(t *testing.T) {
	bin := mcpServerBinary(t)
	cwd := t.TempDir()
	dir, base := filepath.Split(bin)
	cfg := `{"mcpServers":{
		"a":{"command":"${MCP_TEST_DIR}/${MCP_TEST_BASE:-nope}","env":{"TESTSERVER_NAME":"${MCP_TEST_UNSET:-named}"}},
		"b":{"command":"${MCP_TEST_UNSET}/x"}}}`
	if err := os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(`{"enableAllProjectMcpServers":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{}, SettingSources: []settings.SettingSource{settings.Project},
		Env: map[string]string{"MCP_TEST_DIR": filepath.Clean(dir), "MCP_TEST_BASE": base}, MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.MCPStatus()
	if len(st) != 1 || st[0].Name != "a" || st[0].Status != tool.MCPConnected || st[0].ServerName != "named" {
		t.Errorf("status = %+v, want only a, connected, named by the default", st)
	}
	msgs, err := c.Query(context.Background(), "go").Collect()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagMCP && strings.Contains(d.Text, "MCP_TEST_UNSET") {
			found = true
		}
	}
	if !found {
		t.Error("no diagnostic about the unset variable")
	}
}

// TestMCPToolInSubagent: a subagent whose definition names an MCP tool
// gets it and its call reaches the server.
func TestMCPToolInSubagent(t *testing.T) {
	inproc := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "add"}, func(ctx context.Context, _ *sdk.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("sum=%d", in.A+in.B)}}}, nil, nil
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Add", "prompt": "Add 2 and 3.", "subagent_type": "adder"}),
		agentlooptest.ToolUse("toolu_sub", "mcp__calc__add", map[string]any{"a": 2, "b": 3}),
		agentlooptest.Text("5"),
		agentlooptest.Text("The adder says 5."))
	_, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Agent"}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__calc"}, SettingSources: []settings.SettingSource{},
		Agents: map[string]agentloop.AgentDefinition{"adder": {Description: "Adds", Prompt: "You add.",
			Tools: []string{"mcp__calc__add"}}},
		MCPServers:   map[string]agentloop.MCPServerConfig{"calc": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[1].ToolNames(); !slices.Equal(got, []string{"mcp__calc__add"}) {
		t.Errorf("subagent tools = %v", got)
	}
	if c, ok := reqs[2].ToolResult("toolu_sub"); !ok || mcpText(c) != "sum=5" {
		t.Errorf("subagent's MCP result = %+v", c)
	}
}

// TestMCPToolSearchWith200Tools: an MCP server with 200 tools, tool search
// on (the default): the first request declares none of their schemas but
// ToolSearch, a select: query loads two, the next request declares them,
// and one of them runs.
func TestMCPToolSearchWith200Tools(t *testing.T) {
	type in struct {
		X string `json:"x" jsonschema:"any text"`
	}
	inproc := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	for i := range 200 {
		name := fmt.Sprintf("op%03d", i)
		sdk.AddTool(inproc, &sdk.Tool{Name: name, Description: fmt.Sprintf("Operation number %d on widgets", i)},
			func(ctx context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " did " + args.X}}}, nil, nil
			})
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "ToolSearch", map[string]any{"query": "select:mcp__big__op007,mcp__big__op150"}),
		agentlooptest.ToolUse("toolu_2", "mcp__big__op150", map[string]any{"x": "work"}),
		agentlooptest.Text("done"))
	if _, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Read"},
		AllowedTools: []string{"mcp__big"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"big": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	first := reqs[0].ToolNames()
	if !slices.Contains(first, "ToolSearch") || slices.ContainsFunc(first, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("first request declares %q, want ToolSearch and no MCP tool", first)
	}
	if len(reqs[0].Body) > 30_000 {
		t.Errorf("first request is %d bytes; the deferred schemas were sent", len(reqs[0].Body))
	}
	next := reqs[1].ToolNames()
	for _, want := range []string{"mcp__big__op007", "mcp__big__op150"} {
		if !slices.Contains(next, want) {
			t.Errorf("second request does not declare %s: %q", want, next)
		}
	}
	if c := mcpResult(t, srv, "toolu_2"); mcpText(c) != "op150 did work" {
		t.Errorf("toolu_2 = %+v", c)
	}
}
