package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcp"
)

// mcpFlags are the MCP server flags.
type mcpFlags struct {
	servers map[string]agentloop.MCPServerConfig // from --mcp-config, later values winning
	strict  bool                                 // --strict-mcp-config
}

// addMCPConfig reads one --mcp-config value: inline JSON when it starts
// with "{", else the path of a file holding it, in the reference's format
// {"mcpServers": {"name": {...}}}. The flag may be repeated; a server
// named again replaces the earlier one.
func (c *config) addMCPConfig(v string) error {
	data := []byte(v)
	if !strings.HasPrefix(strings.TrimSpace(v), "{") {
		b, err := os.ReadFile(v)
		if err != nil {
			return fmt.Errorf("--mcp-config: %w", err)
		}
		data = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	servers, err := agentloop.ParseMCPConfig(data)
	if err != nil {
		return fmt.Errorf("--mcp-config: %w", err)
	}
	if c.mcp.servers == nil {
		c.mcp.servers = map[string]agentloop.MCPServerConfig{}
	}
	for name, s := range servers {
		c.mcp.servers[name] = s
	}
	return nil
}

// applyMCP sets the MCP options: the servers of --mcp-config,
// --strict-mcp-config, and the connector of package mcp (which also
// serves the project's .mcp.json).
func (c *config) applyMCP(o *agentloop.Options) {
	o.MCPServers = c.mcp.servers
	o.StrictMCPConfig = c.mcp.strict
	o.MCPConnector = mcp.Connector{Version: agentloop.Version}
}
