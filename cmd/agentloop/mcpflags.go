package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcp"
)

// mcpFlags are the MCP server flags.
type mcpFlags struct {
	servers map[string]agentloop.MCPServerConfig // from --mcp-config, later values winning
	strict  bool                                 // --strict-mcp-config
	// sdk names the servers of --mcp-config of type "sdk": servers of the
	// host, reached over the stream-json control channel (mcp_message) as
	// initialize's sdkMcpServers are. The Python Agent SDK declares its
	// in-process servers this way ({"type": "sdk", "name": ...}).
	sdk []string
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
	data, sdk, err := splitSDKServers(data)
	if err != nil {
		return fmt.Errorf("--mcp-config: %w", err)
	}
	servers, err := agentloop.ParseMCPConfig(data)
	if err != nil {
		return fmt.Errorf("--mcp-config: %w", err)
	}
	for _, name := range sdk {
		delete(c.mcp.servers, name)
		if !slices.Contains(c.mcp.sdk, name) {
			c.mcp.sdk = append(c.mcp.sdk, name)
		}
	}
	for name := range servers {
		c.mcp.sdk = slices.DeleteFunc(c.mcp.sdk, func(n string) bool { return n == name })
	}
	if c.mcp.servers == nil {
		c.mcp.servers = map[string]agentloop.MCPServerConfig{}
	}
	for name, s := range servers {
		c.mcp.servers[name] = s
	}
	return nil
}

// splitSDKServers takes the servers of type "sdk" out of an --mcp-config
// document and returns the rest of it and their names, sorted. A document
// without them is returned unchanged; one that is not an object with an
// object mcpServers is left for ParseMCPConfig to report.
func splitSDKServers(data []byte) ([]byte, []string, error) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil {
		return data, nil, nil
	}
	var servers map[string]json.RawMessage
	if json.Unmarshal(doc["mcpServers"], &servers) != nil {
		return data, nil, nil
	}
	var names []string
	for name, raw := range servers {
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &s) == nil && s.Type == "sdk" {
			names = append(names, name)
			delete(servers, name)
		}
	}
	if len(names) == 0 {
		return data, nil, nil
	}
	sort.Strings(names)
	rest, err := json.Marshal(servers)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpServers: %w", err)
	}
	doc["mcpServers"] = rest
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpServers: %w", err)
	}
	return out, names, nil
}

// applyMCP sets the MCP options: the servers of --mcp-config,
// --strict-mcp-config, and the connector of package mcp (which also
// serves the project's .mcp.json).
func (c *config) applyMCP(o *agentloop.Options) {
	o.MCPServers = c.mcp.servers
	o.StrictMCPConfig = c.mcp.strict
	o.MCPConnector = mcp.Connector{Version: agentloop.Version}
}
