package mcp

import (
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// InProcess returns the configuration of an in-process server: srv runs in
// this process and is reached over in-memory transports. Add its tools
// with the SDK's typed mcp.AddTool, for example:
//
//	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
//	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "add", Description: "Add two numbers",
//		Annotations: &sdkmcp.ToolAnnotations{ReadOnlyHint: true}}, add)
//	opts.MCPServers = map[string]agentloop.MCPServerConfig{"calc": mcp.InProcess(srv)}
//
// A tool annotated ReadOnlyHint runs concurrently with other read-only
// calls.
func InProcess(srv *sdk.Server) tool.MCPServerConfig {
	return tool.MCPServerConfig{Type: tool.MCPSDK, Server: srv, Source: "sdk"}
}
