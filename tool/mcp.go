package tool

import (
	"context"
	"time"
)

// This file holds the plain types through which a session reaches MCP
// servers without importing an MCP implementation: the configuration of a
// server, and the [MCPConnector] interface that package
// github.com/agentloop/agentloop/mcp implements on the official MCP Go SDK.
// The loop itself only ever sees the [Tool]s a connector returns.

// The kinds of MCP server (MCPServerConfig.Type).
const (
	MCPStdio = "stdio" // a command, spoken to over its stdin and stdout
	MCPHTTP  = "http"  // a streamable-HTTP endpoint
	MCPSSE   = "sse"   // an HTTP+SSE endpoint (the older transport)
	MCPSDK   = "sdk"   // an in-process server (MCPServerConfig.Server)
)

// The statuses of an MCP server (MCPServerStatus.Status), as the
// reference reports them in system/init.
const (
	MCPConnected = "connected"
	MCPFailed    = "failed"
	MCPPending   = "pending"
	MCPDisabled  = "disabled"
)

// MCPServerConfig is one MCP server, in the reference's configuration
// format (the values of "mcpServers" in .mcp.json and --mcp-config). It is
// plain data except for Server.
type MCPServerConfig struct {
	// Type is MCPStdio, MCPHTTP, MCPSSE or MCPSDK. Empty means MCPStdio,
	// or MCPSDK when Server is set.
	Type string `json:"type,omitempty"`
	// Command, Args and Env start a stdio server. Env is added to the
	// session's tool environment (tool.Env.Environ).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an http or sse server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds each tool call of the server; zero means no bound
	// beyond the run's context. The session fills a zero Timeout from
	// $MCP_TOOL_TIMEOUT (milliseconds) when it is set.
	// In JSON it is milliseconds ("timeout"); values under 1000 ms are
	// ignored, as the reference does.
	Timeout time.Duration `json:"-"`
	// AlwaysLoad keeps the server's tools declared up front when tool
	// search would defer them.
	AlwaysLoad bool `json:"alwaysLoad,omitempty"`
	// Source says where the configuration came from: "sdk" (in-process),
	// "dynamic" (Options or --mcp-config), "project" (.mcp.json), ...
	// The session fills it in when it is empty.
	Source string `json:"-"`
	// Tools are per-tool permission policies (the reference's
	// McpServerToolPolicy list; JSON "tools"). The session checks them
	// when it starts; see MCPToolPolicy.
	Tools []MCPToolPolicy `json:"tools,omitempty"`
	// MaxOutputTokens caps the text of one call's result, in estimated
	// tokens (four characters each): longer text is cut and the model is
	// told so. Zero means DefaultMCPMaxOutputTokens; negative means no
	// cap. The session sets it from $MAX_MCP_OUTPUT_TOKENS.
	MaxOutputTokens int `json:"-"`
	// Server is an in-process server (Type MCPSDK): a *mcp.Server of
	// github.com/modelcontextprotocol/go-sdk/mcp, usually built with
	// package agentloop/mcp, or a *HostTransport of package agentloop/mcp
	// (a server in the process that spawned agentloop). A value of another
	// type fails to connect.
	Server any `json:"-"`
}

// MCPToolPolicy is the permission policy of one tool of a server.
type MCPToolPolicy struct {
	// Name is the tool's name on the server (or its full name,
	// mcp__<server>__<tool>).
	Name string `json:"name"`
	// PermissionPolicy is MCPAlwaysAllow (the tool is allowed as by an
	// allow rule), MCPAlwaysAsk (every call goes to CanUseTool, as with an
	// ask rule) or MCPAlwaysDeny (every call is denied, whatever allows
	// it); empty means none. On in-process (sdk) servers only ask and deny
	// take effect, as in the reference; an always_allow there is reported
	// and dropped.
	PermissionPolicy string `json:"permission_policy,omitempty"`
	// OrgMaxPermission (allow, ask, blocked) is an organisation's cap in
	// the reference. agentloop has no organisation policy: it is parsed
	// and reported as not honoured.
	OrgMaxPermission string `json:"org_max_permission,omitempty"`
}

// The per-tool permission policies (MCPToolPolicy.PermissionPolicy).
const (
	MCPAlwaysAllow = "always_allow"
	MCPAlwaysAsk   = "always_ask"
	MCPAlwaysDeny  = "always_deny"
)

// DefaultMCPMaxOutputTokens is the default cap of an MCP call's result
// (MCPServerConfig.MaxOutputTokens), the reference's
// MAX_MCP_OUTPUT_TOKENS default; MCPOutputWarnTokens is the size above
// which a result is reported as large.
const (
	DefaultMCPMaxOutputTokens = 25_000
	MCPOutputWarnTokens       = 10_000
)

// MCPServerStatus is the state of one configured MCP server.
type MCPServerStatus struct {
	// Name is the server's configuration key.
	Name string `json:"name"`
	// Status is MCPConnected, MCPFailed, MCPPending or MCPDisabled.
	Status string `json:"status"`
	// Source is MCPServerConfig.Source.
	Source string `json:"source,omitempty"`
	// Error says why a failed server failed.
	Error string `json:"error,omitempty"`
	// ServerName and ServerVersion are what the server said of itself
	// when it was connected.
	ServerName    string `json:"-"`
	ServerVersion string `json:"-"`
	// ProtocolVersion is the MCP protocol version agreed with the server
	// at its last connection.
	ProtocolVersion string `json:"-"`
	// Tools are the server's tools, by their full names
	// (mcp__<server>__<tool>).
	Tools []string `json:"-"`
}

// MCPConnector starts the MCP servers of a session. Package
// github.com/agentloop/agentloop/mcp implements it.
type MCPConnector interface {
	// ConnectMCP starts every server concurrently and returns once each
	// is connected, has failed, or startTimeout has passed (zero: no
	// bound beyond ctx). A server's failure is not an error: it shows in
	// the status and its calls fail. env is the session's tool
	// environment (Environ, Cwd) for stdio servers. An error means the
	// connector could not run at all.
	ConnectMCP(ctx context.Context, servers map[string]MCPServerConfig, env *Env, startTimeout time.Duration) (MCPClients, error)
}

// MCPClients are a session's connections to its MCP servers. All methods
// are safe for concurrent use.
type MCPClients interface {
	// Tools are the MCP tools to offer the model: each connected server's
	// tools (named mcp__<server>__<tool>, with Info.MCP set) and, when any
	// server is configured, the resource tools, as they are when
	// ConnectMCP returns; later changes reach an [MCPToolWatcher].
	Tools() []Tool
	// Status reports every configured server, in name order.
	Status() []MCPServerStatus
	// Reconnect closes a server's connection, if any, and connects it
	// again; the error says why that failed.
	Reconnect(ctx context.Context, name string) error
	// Toggle enables or disables a server. A disabled server is
	// disconnected and its calls fail until it is enabled again.
	Toggle(ctx context.Context, name string, enabled bool) error
	// Close disconnects every server and stops stdio server processes.
	Close() error
}

// MCPToolWatcher is implemented by MCPClients whose servers' tools can
// change after ConnectMCP: a server that connects later (Reconnect), one
// that announces notifications/tools/list_changed, one disabled (no
// tools) or enabled again (Toggle).
type MCPToolWatcher interface {
	// WatchTools makes f hear of every such change, with the server's
	// whole new tool set (named as in Tools; empty while disabled), one
	// call at a time per server and in order. f must not block on the
	// clients. Set it once.
	WatchTools(f func(server string, tools []Tool))
}

// MCPReporter is implemented by MCPClients that tell the session what
// their servers do outside tool results: log messages a server sends
// (notifications/message), results above MCPOutputWarnTokens or cut at
// the cap, automatic reconnection attempts. The session passes each to its
// diagnostics channel.
type MCPReporter interface {
	// ReportTo makes f hear of each such event, with the server's name and
	// a one-line text. f must not block on the clients. Set it once.
	ReportTo(f func(server, text string))
}

// MCPRetrier is implemented by MCPClients that reconnect failed servers in
// the background. The session calls RetryFailed before each query.
type MCPRetrier interface {
	// RetryFailed starts a new round of background reconnection attempts
	// for each server that is failed (not disabled) and not already being
	// retried. It does not wait for them.
	RetryFailed()
}
