package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/mcphost"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// MCP servers reach the session through three plain types of package tool,
// so that the core never imports the MCP SDK: a server's configuration, its
// status, and the connector (package agentloop/mcp's mcp.Connector) that
// turns configurations into ordinary tools.
type (
	// MCPServerConfig is one MCP server's configuration (see
	// [tool.MCPServerConfig]).
	MCPServerConfig = tool.MCPServerConfig
	// MCPServerStatus is one MCP server's state, as [Client.MCPStatus]
	// reports it.
	MCPServerStatus = tool.MCPServerStatus
	// MCPToolPolicy is the permission policy of one tool of an MCP
	// server (see [tool.MCPToolPolicy]).
	MCPToolPolicy = tool.MCPToolPolicy
	// MCPConnector connects MCP servers; mcp.Connector{} of package
	// github.com/agentloop/agentloop/mcp is the implementation.
	MCPConnector = tool.MCPConnector
)

// ErrNoMCPServer is returned by the MCP methods of [Client] for a server
// name the session does not have.
var ErrNoMCPServer = mcphost.ErrNoServer

// defaultMCPStartTimeout bounds a server's start when neither
// Options.MCPStartTimeout nor $MCP_TIMEOUT says otherwise.
const defaultMCPStartTimeout = 30 * time.Second

// MCPClients is the session's live connections (see [tool.MCPClients]).
type MCPClients = tool.MCPClients

// ParseMCPConfig reads MCP server configurations in the reference's
// format, {"mcpServers": {"<name>": {...}}}, as in .mcp.json and the CLI's
// --mcp-config. A server's "timeout" is in milliseconds (values under 1000
// are ignored). An unknown type, a stdio server without a command or an
// http/sse server without a url is an error naming the server.
func ParseMCPConfig(data []byte) (map[string]MCPServerConfig, error) {
	return mcphost.ParseConfig(data)
}

// mcpServerSet merges the session's server configurations: the project's
// approved .mcp.json servers and the plugins' servers (unless
// StrictMCPConfig), then Options.MCPServers over them.
func (s *Session) mcpServerSet(st *settings.Settings) (map[string]MCPServerConfig, error) {
	out := map[string]MCPServerConfig{}
	if !s.opts.StrictMCPConfig && s.projectSourceOn() {
		project, err := s.projectMCPServers(st)
		if err != nil {
			return nil, err
		}
		for name, c := range project {
			out[name] = c
		}
	}
	if !s.opts.StrictMCPConfig {
		for name, c := range s.pluginMCPServers() { // plugins_components.go
			out[name] = c
		}
	}
	for name, c := range s.opts.MCPServers {
		if err := mcphost.CheckServer(name, c); err != nil {
			return nil, fmt.Errorf("%w: MCPServers: %w", ErrInvalidOption, err)
		}
		if c.Source == "" {
			c.Source = "dynamic"
			if c.Type == tool.MCPSDK || (c.Type == "" && c.Server != nil) {
				c.Source = "sdk"
			}
		}
		out[name] = c
	}
	s.mcpBlocked = s.filterManagedMCP(out) // managed_policy.go
	mcphost.Prepare(out, os.Getenv, func(text string) { s.diag.Add(DiagMCP, text) },
		func(text string) { s.diag.Add(DiagOption, text) })
	return out, nil
}

// projectSourceOn reports whether the project setting source is loaded.
func (s *Session) projectSourceOn() bool {
	return s.opts.SettingSources == nil || slices.Contains(s.opts.SettingSources, settings.Project)
}

// projectMCPServers reads <cwd>/.mcp.json and keeps the servers the
// settings approve (enableAllProjectMcpServers, enabledMcpjsonServers, less
// disabledMcpjsonServers). A server not approved is left out with a
// diagnostic; a malformed file is reported and skipped.
func (s *Session) projectMCPServers(st *settings.Settings) (map[string]MCPServerConfig, error) {
	path := filepath.Join(s.env.Cwd, ".mcp.json")
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		// The sandbox holds an empty directory at a missing .mcp.json
		// while a sandboxed command runs (sandbox_config.go): no file.
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		s.diag.Add(DiagMCP, fmt.Sprintf("%s: %v; its servers are not started", path, err))
		return nil, nil
	}
	servers, err := ParseMCPConfig(data)
	if err != nil {
		s.diag.Add(DiagMCP, fmt.Sprintf("%s: %v; its servers are not started", path, err))
		return nil, nil
	}
	var enableAll bool
	var enabled, disabled []string
	if st != nil {
		readExtra(s, st, "enableAllProjectMcpServers", &enableAll)
		readExtra(s, st, "enabledMcpjsonServers", &enabled)
		readExtra(s, st, "disabledMcpjsonServers", &disabled)
	}
	out := map[string]MCPServerConfig{}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		c := servers[name]
		switch {
		case slices.Contains(disabled, name):
			continue
		case !enableAll && !slices.Contains(enabled, name):
			s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q of %s is not approved (enabledMcpjsonServers or enableAllProjectMcpServers); not started", name, path))
			continue
		}
		c, missing := mcphost.ExpandEnv(c, s.envLookup)
		if len(missing) > 0 {
			s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q of %s uses unset environment variables %s; not started",
				name, path, strings.Join(missing, ", ")))
			continue
		}
		c.Source = "project"
		out[name] = c
	}
	return out, nil
}

// readExtra decodes a settings key this package reads from Settings.Extra.
func readExtra(s *Session, st *settings.Settings, key string, v any) {
	raw, ok := st.Extra[key]
	if !ok {
		return
	}
	if err := json.Unmarshal(raw, v); err != nil {
		s.diag.Add(DiagSettings, fmt.Sprintf("settings key %s: %v; ignored", key, err))
	}
}

// startMCP starts the session's MCP servers, concurrently and each within
// the start timeout, and returns their tools. A server that fails is
// reported (status, diagnostic), not an error.
func (s *Session) startMCP(ctx context.Context, st *settings.Settings) ([]tool.Tool, error) {
	servers, err := s.mcpServerSet(st)
	if err != nil {
		return nil, err
	}
	s.mcp, err = mcphost.Start(ctx, mcphost.Config{Servers: servers, Blocked: s.mcpBlocked,
		Connector: s.opts.MCPConnector, Env: s.env, StartTimeout: s.mcpStartTimeout(),
		Disallowed: s.opts.DisallowedTools, Report: func(text string) { s.diag.Add(DiagMCP, text) }})
	if err != nil {
		return nil, err
	}
	return s.mcp.Tools(), nil
}

// customAndMCPTools are Options.CustomTools and the MCP servers' tools,
// where a subagent looks for the tools it may use that are not built in.
func (s *Session) customAndMCPTools() []tool.Tool {
	return append(slices.Clone(s.opts.CustomTools), s.mcp.Tools()...)
}

// mcpServerOf names the MCP server of a tool, for the mcp_server field of
// hook inputs; nil for a tool that is not an MCP server's.
func (s *Session) mcpServerOf(toolName string) *hooks.MCPServer {
	if !strings.HasPrefix(toolName, "mcp__") {
		return nil
	}
	return s.mcp.ServerOf(toolName)
}

// mcpStartTimeout is Options.MCPStartTimeout, else $MCP_TIMEOUT, else 30s.
func (s *Session) mcpStartTimeout() time.Duration {
	if s.opts.MCPStartTimeout > 0 {
		return s.opts.MCPStartTimeout
	}
	if v := os.Getenv("MCP_TIMEOUT"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
		s.diag.Add(DiagOption, fmt.Sprintf("MCP_TIMEOUT=%q is not a positive number of milliseconds; using %v", v, defaultMCPStartTimeout))
	}
	return defaultMCPStartTimeout
}

// mcpStatus reports every configured server.
func (s *Session) mcpStatus() []MCPServerStatus { return s.mcp.Status() }

// mcpInit is the mcp_servers field of system/init.
func (s *Session) mcpInit() []message.MCPServer { return s.mcp.Init() }

// closeMCP disconnects the servers and stops their processes.
func (s *Session) closeMCP() { s.mcp.Close() }

// MCPStatus is agentloop's Client.MCPStatus; see its doc there.
func (c *Client) MCPStatus() []MCPServerStatus { return c.sess.mcpStatus() }

// ReconnectMCPServer is agentloop's Client.ReconnectMCPServer; see its doc there.
func (c *Client) ReconnectMCPServer(ctx context.Context, name string) error {
	cl, err := c.mcpClients(name)
	if err != nil {
		return err
	}
	return cl.Reconnect(ctx, name)
}

// ToggleMCPServer is agentloop's Client.ToggleMCPServer; see its doc there.
func (c *Client) ToggleMCPServer(ctx context.Context, name string, enabled bool) error {
	cl, err := c.mcpClients(name)
	if err != nil {
		return err
	}
	return cl.Toggle(ctx, name, enabled)
}

// mcpClients checks the client and the server name.
func (c *Client) mcpClients(name string) (MCPClients, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	for _, st := range c.sess.mcpStatus() {
		if st.Name == name {
			if c.sess.mcp.Blocked(name) {
				return nil, fmt.Errorf("%w: MCP server %q is %s", ErrManagedPolicyDenied, name, st.Error)
			}
			cl := c.sess.mcp.Clients()
			if cl == nil {
				return nil, fmt.Errorf("agentloop: MCP server %q: %s", name, st.Error)
			}
			return cl, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNoMCPServer, name)
}

// envLookup finds a variable in the session's tool environment.
func (s *Session) envLookup(key string) (string, bool) {
	env := s.env.Environ
	if env == nil {
		return os.LookupEnv(key)
	}
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// retryMCP starts, before a query, the background reconnection of the
// servers that are failed (not disabled). It does not wait: a server that
// connects joins from the next model request.
func (s *Session) retryMCP() { s.mcp.Retry() }

// watchMCP makes the main loop follow the servers' tool changes.
func (s *Session) watchMCP() { s.mcp.Watch(s.engine()) }

// followMCP makes the subagent agent of the loop parent, running on child
// with the definition def, follow the servers' tools until the function
// it returns is called.
func (s *Session) followMCP(child *engine.Session, parent, agent lineage.Agent, def AgentDefinition) func() {
	var denied func(string) bool
	if s.lin != nil {
		denied = s.lin.Disallowed
	}
	if child == nil {
		return func() {}
	}
	return s.mcp.Follow(child, parent.ID, agent.ID, def.Tools, def.DisallowedTools, denied)
}
