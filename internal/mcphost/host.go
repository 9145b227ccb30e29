package mcphost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/tool"
)

// ErrNoServer is returned for a server name the session does not have.
var ErrNoServer = errors.New("agentloop: no such MCP server")

// Loop is what the host needs of a loop's engine to change the MCP tools
// it offers from its next model request.
type Loop interface {
	ReplaceTools(old []string, ts []tool.Tool) error
	ToolNames() []string
}

// Config is what Start needs.
type Config struct {
	// Servers are the configurations to start, checked and prepared
	// (CheckServer, Prepare); Blocked the servers the managed policy
	// stopped, reported in Status as they are.
	Servers map[string]tool.MCPServerConfig
	Blocked []tool.MCPServerStatus
	// Connector starts the servers; nil reports each one failed.
	Connector tool.MCPConnector
	// Env is the session's tool environment, passed to the connector.
	Env *tool.Env
	// StartTimeout bounds each server's start.
	StartTimeout time.Duration
	// Disallowed are the session's DisallowedTools entries (Disallowed).
	Disallowed []string
	// Report receives the host's diagnostics (the session's DiagMCP).
	Report func(text string)
}

// Host is a session's MCP servers and the tools they offer. Its methods
// are safe for concurrent use; a nil *Host has no servers.
type Host struct {
	clients    tool.MCPClients        // nil when there is no connector
	failed     []tool.MCPServerStatus // the servers' status when there is no connector
	blocked    []tool.MCPServerStatus // the servers the managed policy stopped
	disallowed []string
	report     func(string)

	// mu guards what follows, which changes when a server's tools do.
	mu     sync.Mutex
	tools  []tool.Tool       // the tools offered, after Disallowed
	server map[string]string // tool name → server name
	known  map[string]bool   // every server tool name ever offered
	main   Loop              // the main loop, once Watch is called
	loops  map[string]*loop  // running subagents, by agent id
}

// Start starts cfg's servers, concurrently and each within the start
// timeout, and returns the host with their tools. A server that fails is
// reported (status, diagnostic), not an error; the error is the
// connector's own failure. With no servers and none blocked it returns a
// nil host.
func Start(ctx context.Context, cfg Config) (*Host, error) {
	if len(cfg.Servers) == 0 && len(cfg.Blocked) == 0 {
		return nil, nil
	}
	report := cfg.Report
	if report == nil {
		report = func(string) {}
	}
	h := &Host{blocked: cfg.Blocked, disallowed: cfg.Disallowed, report: report,
		server: map[string]string{}, known: map[string]bool{}}
	if len(cfg.Servers) == 0 {
		return h, nil
	}
	if cfg.Connector == nil {
		names := make([]string, 0, len(cfg.Servers))
		for n := range cfg.Servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			h.failed = append(h.failed, tool.MCPServerStatus{Name: n, Status: tool.MCPFailed,
				Source: cfg.Servers[n].Source, Error: "Options.MCPConnector is nil"})
		}
		report("MCP servers are configured but Options.MCPConnector is nil (set it to mcp.Connector{} of package github.com/agentloop/agentloop/mcp); they are not started")
		return h, nil
	}
	clients, err := cfg.Connector.ConnectMCP(ctx, cfg.Servers, cfg.Env, cfg.StartTimeout)
	if err != nil {
		return nil, fmt.Errorf("agentloop: mcp: %w", err)
	}
	h.clients = clients
	if r, ok := clients.(tool.MCPReporter); ok {
		r.ReportTo(func(server, text string) { report(fmt.Sprintf("MCP server %q: %s", server, text)) })
	}
	for _, st := range clients.Status() {
		if st.Status == tool.MCPFailed {
			report(fmt.Sprintf("MCP server %q failed to start: %s", st.Name, st.Error))
		}
		for _, n := range st.Tools {
			h.server[n] = st.Name
			h.known[n] = true
		}
	}
	h.tools = h.allowed(clients.Tools())
	return h, nil
}

// allowed is ts less the tools the session's DisallowedTools remove.
func (h *Host) allowed(ts []tool.Tool) []tool.Tool {
	return slices.DeleteFunc(slices.Clone(ts), func(t tool.Tool) bool { return Disallowed(h.disallowed, t.Info().Name) })
}

// Tools are the tools the servers offer now.
func (h *Host) Tools() []tool.Tool {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.tools)
}

// Status reports every configured server, the blocked ones last.
func (h *Host) Status() []tool.MCPServerStatus {
	switch {
	case h == nil:
		return []tool.MCPServerStatus{}
	case h.clients == nil:
		return append(slices.Clone(h.failed), h.blocked...)
	default:
		return append(h.clients.Status(), h.blocked...)
	}
}

// Init is the mcp_servers field of system/init.
func (h *Host) Init() []message.MCPServer {
	out := []message.MCPServer{}
	for _, st := range h.Status() {
		out = append(out, message.MCPServer{Name: st.Name, Status: st.Status, Source: st.Source})
	}
	return out
}

// ServerOf names the MCP server of a tool, for the mcp_server field of
// hook inputs; nil for a tool that is not a server's.
func (h *Host) ServerOf(toolName string) *hooks.MCPServer {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	name, ok := h.server[toolName]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	for _, st := range h.Status() {
		if st.Name == name {
			return &hooks.MCPServer{Name: name, Source: st.Source}
		}
	}
	return &hooks.MCPServer{Name: name}
}

// Blocked reports whether the managed policy stopped the server name.
func (h *Host) Blocked(name string) bool {
	return h != nil && slices.ContainsFunc(h.blocked, func(b tool.MCPServerStatus) bool { return b.Name == name })
}

// Clients are the live connections; nil when no connector started them.
func (h *Host) Clients() tool.MCPClients {
	if h == nil {
		return nil
	}
	return h.clients
}

// Retry reconnects the failed servers in the background, where the
// connector can.
func (h *Host) Retry() {
	if h == nil || h.clients == nil {
		return
	}
	if r, ok := h.clients.(tool.MCPRetrier); ok {
		r.RetryFailed()
	}
}

// Close disconnects the servers and stops their processes.
func (h *Host) Close() {
	if h != nil && h.clients != nil {
		_ = h.clients.Close()
	}
}
