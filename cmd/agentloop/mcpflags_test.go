package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// buildMCPServer builds the stdio MCP test server of package mcp (with the
// real HOME, for the real build cache).
func buildMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	cmd := exec.Command("go", "build", "-o", bin, "../../mcp/internal/testserver/stdio")
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		cmd.Env = append(os.Environ(), "HOME="+u.HomeDir)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return bin
}

// TestMCPConfigFlag: --mcp-config takes a file or inline JSON, may be
// repeated, and its servers' tools run through the CLI; a bad value is a
// usage error naming the problem.
func TestMCPConfigFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an MCP server program; go test without -short runs it")
	}
	bin := buildMCPServer(t)
	cfg := func(name string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": bin, "timeout": 60000}}})
		return string(b)
	}
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, []byte(cfg("fromfile")), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_1", "mcp__fromfile__echo", map[string]any{"text": "a"}),
			agentlooptest.ToolUseBlock("toolu_2", "mcp__inline__echo", map[string]any{"text": "b"})),
		agentlooptest.Text("done"))
	code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--mcp-config", file, "--mcp-config", cfg("inline"),
		"--strict-mcp-config", "--allowedTools", "mcp__fromfile,mcp__inline", "--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var init struct {
		Tools      []string `json:"tools"`
		MCPServers []struct {
			Name, Status, Source string
		} `json:"mcp_servers"`
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"subtype":"init"`) {
			if err := json.Unmarshal([]byte(l), &init); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if len(init.MCPServers) != 2 || init.MCPServers[0].Name != "fromfile" || init.MCPServers[0].Status != "connected" ||
		init.MCPServers[1].Name != "inline" || init.MCPServers[1].Status != "connected" || init.MCPServers[0].Source != "dynamic" {
		t.Errorf("init mcp_servers = %+v", init.MCPServers)
	}
	if !slices.Contains(init.Tools, "mcp__fromfile__echo") || !slices.Contains(init.Tools, "mcp__inline__echo") {
		t.Errorf("init tools = %v", init.Tools)
	}
	req := srv.Requests()[1]
	for id, want := range map[string]string{"toolu_1": "echo: a", "toolu_2": "echo: b"} {
		if c, ok := req.ToolResult(id); !ok || c.ResultText() != want || len(c.Blocks) != 1 {
			t.Errorf("%s result = %+v, want %q", id, c, want)
		}
	}

	for _, tc := range []struct{ name, value, want string }{
		{"missing file", filepath.Join(t.TempDir(), "nope.json"), "--mcp-config: open "},
		{"no servers object", `{"servers":{}}`, `--mcp-config: mcp config: no "mcpServers" object`},
		{"no command", `{"mcpServers":{"x":{"args":["a"]}}}`, `--mcp-config: mcp config: server "x": a stdio server needs a command`},
		{"bad json", `{"mcpServers":`, "--mcp-config: mcp config: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, "", "-p", "hi", "--mcp-config", tc.value)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want an error containing %q", code, errOut, tc.want)
			}
		})
	}
}
