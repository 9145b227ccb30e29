// Package mcp connects an agentloop session to MCP (Model Context
// Protocol) servers, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). The core package does not import
// that SDK: it sees MCP tools as ordinary [tool.Tool]s, and reaches this
// package through the [tool.MCPConnector] interface that [Connector]
// implements.
//
// # Use
//
// Configure servers in agentloop.Options.MCPServers and set the connector:
//
//	opts := &agentloop.Options{
//		MCPServers: map[string]agentloop.MCPServerConfig{
//			"files": {Command: "files-mcp", Args: []string{"--root", "."}},
//			"docs":  {Type: "http", URL: "https://example.com/mcp"},
//			"calc":  mcp.InProcess(calcServer), // a *sdkmcp.Server
//		},
//		MCPConnector: mcp.Connector{},
//	}
//
// Servers may also come from .mcp.json (project setting source) and from
// the CLI's --mcp-config; the session merges them.
//
// # Tools
//
// Each tool of a server named s is offered as mcp__<s>__<tool> (characters
// outside [A-Za-z0-9_-] in s and the tool name become '_'), with the
// server's description and input schema, and tool.Info.MCP set so that tool
// search defers it. A tool annotated readOnlyHint runs concurrently with
// other read-only calls. Permission rules and hooks see the full name. The
// resource tools ListMcpResourcesTool and ReadMcpResourceTool are offered
// when any server is configured.
//
// # Results and failures
//
// A call's content blocks become the tool result: text as text, images as
// image blocks, embedded text resources as text, resource links and other
// blocks as a short text description. When the server sends structured
// content the model gets its JSON (and the image and resource blocks, not
// the text ones), as the reference does. isError becomes an is_error
// result. A server that fails to start or times out is marked failed and
// offers no tools until it connects: it is retried in the background
// (Connector.RetryAttempts, RetryBackoff) and again before each query, and
// its tools join once it is up. A call that outlasts the server's timeout,
// or during which the server dies, is an is_error result, never a crash or
// a hang; a dead server is marked failed, retried in the background, and
// its next call reconnects it once. A result's text is capped
// (MCPServerConfig.MaxOutputTokens). Log messages of level warning and
// above, large results and reconnections are reported (tool.MCPReporter).
//
// # In-process servers
//
// An in-process server is a *mcp.Server of the SDK with typed tools added by
// the SDK's generic mcp.AddTool; [InProcess] wraps it as a configuration.
// It is connected over in-memory transports, so calls cost no process or
// socket.
//
// # Lifetime
//
// Servers start concurrently when the session starts, each bounded by the
// start timeout; stdio servers run in their own process group and the group
// is killed when the session closes.
package mcp
