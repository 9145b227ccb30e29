package acp

import (
	"fmt"

	"github.com/agentloop/agentloop"
	sdk "github.com/coder/acp-go-sdk"
)

// addMCPServers adds the editor's MCP servers to o.MCPServers; one of
// them replaces a base server of the same name. A server without a name,
// or of a transport agentloop does not speak (acp), is an error.
func addMCPServers(o *agentloop.Options, servers []sdk.McpServer) error {
	for i, s := range servers {
		var name string
		var cfg agentloop.MCPServerConfig
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			cfg = agentloop.MCPServerConfig{Type: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args}
			if len(s.Stdio.Env) > 0 {
				cfg.Env = map[string]string{}
				for _, e := range s.Stdio.Env {
					cfg.Env[e.Name] = e.Value
				}
			}
		case s.Http != nil:
			name = s.Http.Name
			cfg = agentloop.MCPServerConfig{Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			cfg = agentloop.MCPServerConfig{Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}
		default:
			return fmt.Errorf("mcpServers[%d]: only stdio, http and sse servers are supported", i)
		}
		if name == "" {
			return fmt.Errorf("mcpServers[%d]: the server has no name", i)
		}
		if o.MCPServers == nil {
			o.MCPServers = map[string]agentloop.MCPServerConfig{}
		}
		o.MCPServers[name] = cfg
	}
	return nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}
