package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// textTool adds to srv a tool without input that answers text.
func textTool(srv *sdk.Server, name, text string) {
	sdk.AddTool(srv, &sdk.Tool{Name: name, Description: "answers " + text}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
	})
}

// mcpClient opens a client on srv with the MCP servers given.
func mcpClient(t *testing.T, srv *agentlooptest.Server, search agentloop.ToolSearchMode, servers map[string]agentloop.MCPServerConfig) *agentloop.Client {
	t.Helper()
	var allowed []string
	for name := range servers {
		allowed = append(allowed, "mcp__"+name)
	}
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: search,
		AllowedTools: allowed, SettingSources: []settings.SettingSource{},
		MCPServers: servers, MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// query runs one prompt to its result.
func query(t *testing.T, c *agentloop.Client, prompt string) {
	t.Helper()
	if _, err := c.Query(context.Background(), prompt).Result(); err != nil {
		t.Fatal(err)
	}
}

// waitMCPTool waits until the named server lists the tool.
func waitMCPTool(t *testing.T, c *agentloop.Client, server, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, st := range c.MCPStatus() {
			if st.Name == server && slices.Contains(st.Tools, name) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server %q never listed %s: %+v", server, name, c.MCPStatus())
}

// offered reports whether request i declares the tool, or (with tool
// search) names it among the deferred tools.
func offered(srv *agentlooptest.Server, i int, name string) (declared, announced bool) {
	r := srv.Requests()[i]
	return slices.Contains(r.ToolNames(), name), strings.Contains(r.SystemText(), name)
}

// TestMCPToolsListChanged: a tool an in-process server adds mid-session
// (notifications/tools/list_changed) is offered from the next request —
// declared, or deferred to tool search when it is on — and runs.
func TestMCPToolsListChanged(t *testing.T) {
	for _, tc := range []struct {
		search       agentloop.ToolSearchMode
		wantDeclared bool
	}{
		{agentloop.ToolSearchOff, true},
		{agentloop.ToolSearchOn, false},
	} {
		t.Run(string(tc.search), func(t *testing.T) {
			inproc := sdk.NewServer(&sdk.Implementation{Name: "grow", Version: "1"}, nil)
			textTool(inproc, "a", "a ran")
			srv := agentlooptest.NewTB(t,
				agentlooptest.Text("done"),
				agentlooptest.ToolUse("toolu_1", "mcp__grow__b", map[string]any{}),
				agentlooptest.Text("done"))
			c := mcpClient(t, srv, tc.search, map[string]agentloop.MCPServerConfig{"grow": mcp.InProcess(inproc)})
			query(t, c, "one")
			if d, a := offered(srv, 0, "mcp__grow__b"); d || a {
				t.Fatalf("mcp__grow__b offered before it exists (declared %v, announced %v)", d, a)
			}
			textTool(inproc, "b", "b ran")
			waitMCPTool(t, c, "grow", "mcp__grow__b")
			query(t, c, "two")
			d, a := offered(srv, 1, "mcp__grow__b")
			if d != tc.wantDeclared || a == tc.wantDeclared {
				t.Errorf("after list_changed: declared %v, announced as deferred %v; want declared %v", d, a, tc.wantDeclared)
			}
			if d, a := offered(srv, 1, "mcp__grow__a"); !d && !a {
				t.Error("mcp__grow__a is no longer offered")
			}
			if r := mcpResult(t, srv, "toolu_1"); mcpText(r) != "b ran" {
				t.Errorf("call of the new tool = %+v", r)
			}
		})
	}
}

// TestMCPToggleDeclaredTools: a disabled server's tools leave the next
// request, a call still made gets an is_error result, and enabling it
// again declares them again.
func TestMCPToggleDeclaredTools(t *testing.T) {
	inproc := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	textTool(inproc, "add", "sum")
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("done"),
		agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{}),
		agentlooptest.Text("done"),
		agentlooptest.Text("done"))
	c := mcpClient(t, srv, agentloop.ToolSearchOff, map[string]agentloop.MCPServerConfig{"calc": mcp.InProcess(inproc)})
	ctx := context.Background()
	query(t, c, "one")
	if d, _ := offered(srv, 0, "mcp__calc__add"); !d {
		t.Fatal("mcp__calc__add is not declared at start")
	}
	if err := c.ToggleMCPServer(ctx, "calc", false); err != nil {
		t.Fatal(err)
	}
	query(t, c, "two")
	if d, _ := offered(srv, 1, "mcp__calc__add"); d {
		t.Error("a disabled server's tool is still declared")
	}
	if r := mcpResult(t, srv, "toolu_1"); r.IsError == nil || !*r.IsError {
		t.Errorf("call of a disabled server's tool = %+v, want is_error", r)
	}
	if err := c.ToggleMCPServer(ctx, "calc", true); err != nil {
		t.Fatal(err)
	}
	query(t, c, "three")
	if d, _ := offered(srv, 3, "mcp__calc__add"); !d {
		t.Error("mcp__calc__add is not declared again after the server is enabled")
	}
}

// TestMCPReconnectAfterFailedStart: a server that failed at start (its
// command did not exist yet) and is reconnected has its tools declared
// from the next request, and they run.
func TestMCPReconnectAfterFailedStart(t *testing.T) {
	bin := mcpServerBinary(t)
	late := filepath.Join(t.TempDir(), "late-server")
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("done"),
		agentlooptest.ToolUse("toolu_1", "mcp__late__echo", map[string]any{"text": "x"}),
		agentlooptest.Text("done"))
	c := mcpClient(t, srv, agentloop.ToolSearchOff, map[string]agentloop.MCPServerConfig{"late": {Command: late}})
	if st := c.MCPStatus(); len(st) != 1 || st[0].Status != tool.MCPFailed {
		t.Fatalf("status at start = %+v, want failed", st)
	}
	query(t, c, "one")
	if d, _ := offered(srv, 0, "mcp__late__echo"); d {
		t.Fatal("a failed server's tool is declared")
	}
	if err := os.Symlink(bin, late); err != nil {
		t.Fatal(err)
	}
	if err := c.ReconnectMCPServer(context.Background(), "late"); err != nil {
		t.Fatal(err)
	}
	query(t, c, "two")
	if d, _ := offered(srv, 1, "mcp__late__echo"); !d {
		t.Errorf("after the reconnect the request declares %v, want mcp__late__echo", srv.Requests()[1].ToolNames())
	}
	if r := mcpResult(t, srv, "toolu_1"); mcpText(r) != "echo: x" {
		t.Errorf("call after the reconnect = %+v", r)
	}
}
