package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/hooks"
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
var ErrNoMCPServer = errors.New("agentloop: no such MCP server")

// defaultMCPStartTimeout bounds a server's start when neither
// Options.MCPStartTimeout nor $MCP_TIMEOUT says otherwise.
const defaultMCPStartTimeout = 30 * time.Second

// mcpState is the session's MCP servers.
type mcpState struct {
	clients MCPClients        // nil when there is no connector
	failed  []MCPServerStatus // the servers' status when there is no connector
	blocked []MCPServerStatus // the servers the managed policy stopped (managed_policy.go)

	// mu guards tools and server, which change when a server's tools do
	// (mcp_toolset.go).
	mu     sync.Mutex
	tools  []tool.Tool         // the tools offered, after DisallowedTools
	server map[string]string   // tool name → server name
	known  map[string]bool     // every server tool name ever offered
	loops  map[string]*mcpLoop // running subagents, by agent id (mcp_subagent.go)
}

// MCPClients is the session's live connections (see [tool.MCPClients]).
type MCPClients = tool.MCPClients

// ParseMCPConfig reads MCP server configurations in the reference's
// format, {"mcpServers": {"<name>": {...}}}, as in .mcp.json and the CLI's
// --mcp-config. A server's "timeout" is in milliseconds (values under 1000
// are ignored). An unknown type, a stdio server without a command or an
// http/sse server without a url is an error naming the server.
func ParseMCPConfig(data []byte) (map[string]MCPServerConfig, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	if doc.MCPServers == nil {
		return nil, errors.New(`mcp config: no "mcpServers" object`)
	}
	out := make(map[string]MCPServerConfig, len(doc.MCPServers))
	for name, raw := range doc.MCPServers {
		var c MCPServerConfig
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("mcp config: server %q: %w", name, err)
		}
		var t struct {
			Timeout float64 `json:"timeout"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("mcp config: server %q: timeout: %w", name, err)
		}
		if t.Timeout >= 1000 {
			c.Timeout = time.Duration(t.Timeout) * time.Millisecond
		}
		if err := checkMCPServer(name, c); err != nil {
			return nil, fmt.Errorf("mcp config: %w", err)
		}
		out[name] = c
	}
	return out, nil
}

// checkMCPServer reports what makes a configuration unusable.
func checkMCPServer(name string, c MCPServerConfig) error {
	if name == "" {
		return errors.New("a server has an empty name")
	}
	switch c.Type {
	case "", tool.MCPStdio:
		if c.Server != nil && c.Type == "" {
			return nil
		}
		if c.Command == "" {
			return fmt.Errorf("server %q: a stdio server needs a command", name)
		}
	case tool.MCPHTTP, tool.MCPSSE:
		if c.URL == "" {
			return fmt.Errorf("server %q: an %s server needs a url", name, c.Type)
		}
	case tool.MCPSDK:
		if c.Server == nil {
			return fmt.Errorf("server %q: an sdk server needs Server (an in-process server; see package agentloop/mcp)", name)
		}
	default:
		return fmt.Errorf("server %q: unknown type %q (want stdio, http, sse or sdk)", name, c.Type)
	}
	return checkMCPPolicies(name, c) // mcp_policy.go
}

// mcpServerSet merges the session's server configurations: the project's
// approved .mcp.json servers and the plugins' servers (unless
// StrictMCPConfig), then Options.MCPServers over them.
func (s *session) mcpServerSet(st *settings.Settings) (map[string]MCPServerConfig, error) {
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
		if err := checkMCPServer(name, c); err != nil {
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
	s.prepareMCPServers(out)               // mcp_policy.go
	return out, nil
}

// projectSourceOn reports whether the project setting source is loaded.
func (s *session) projectSourceOn() bool {
	return s.opts.SettingSources == nil || slices.Contains(s.opts.SettingSources, settings.Project)
}

// projectMCPServers reads <cwd>/.mcp.json and keeps the servers the
// settings approve (enableAllProjectMcpServers, enabledMcpjsonServers, less
// disabledMcpjsonServers). A server not approved is left out with a
// diagnostic; a malformed file is reported and skipped.
func (s *session) projectMCPServers(st *settings.Settings) (map[string]MCPServerConfig, error) {
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
		c, missing := expandMCPEnv(c, s.envLookup)
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
func readExtra(s *session, st *settings.Settings, key string, v any) {
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
func (s *session) startMCP(ctx context.Context, st *settings.Settings) ([]tool.Tool, error) {
	servers, err := s.mcpServerSet(st)
	if err == nil && len(servers) == 0 && len(s.mcpBlocked) > 0 {
		s.mcp = &mcpState{blocked: s.mcpBlocked}
	}
	if err != nil || len(servers) == 0 {
		return nil, err
	}
	s.mcp = &mcpState{blocked: s.mcpBlocked}
	if s.opts.MCPConnector == nil {
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s.mcp.failed = append(s.mcp.failed, MCPServerStatus{Name: n, Status: tool.MCPFailed,
				Source: servers[n].Source, Error: "Options.MCPConnector is nil"})
		}
		s.diag.Add(DiagMCP, "MCP servers are configured but Options.MCPConnector is nil (set it to mcp.Connector{} of package github.com/agentloop/agentloop/mcp); they are not started")
		return nil, nil
	}
	clients, err := s.opts.MCPConnector.ConnectMCP(ctx, servers, s.env, s.mcpStartTimeout())
	if err != nil {
		return nil, fmt.Errorf("agentloop: mcp: %w", err)
	}
	s.mcp.clients = clients
	s.reportMCP(clients)
	for _, st := range clients.Status() {
		if st.Status == tool.MCPFailed {
			s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q failed to start: %s", st.Name, st.Error))
		}
	}
	s.mcp.tools = slices.DeleteFunc(clients.Tools(), func(t tool.Tool) bool {
		return mcpDisallowed(s.opts.DisallowedTools, t.Info().Name)
	})
	s.mcp.server, s.mcp.known = map[string]string{}, map[string]bool{}
	for _, st := range clients.Status() {
		for _, n := range st.Tools {
			s.mcp.server[n] = st.Name
			s.mcp.known[n] = true
		}
	}
	return s.mcp.tools, nil
}

// customAndMCPTools are Options.CustomTools and the MCP servers' tools,
// where a subagent looks for the tools it may use that are not built in.
func (s *session) customAndMCPTools() []tool.Tool {
	if s.mcp == nil {
		return s.opts.CustomTools
	}
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	return append(slices.Clone(s.opts.CustomTools), s.mcp.tools...)
}

// mcpServerOf names the MCP server of a tool, for the mcp_server field of
// hook inputs; nil for a tool that is not an MCP server's.
func (s *session) mcpServerOf(toolName string) *hooks.MCPServer {
	if s.mcp == nil || !strings.HasPrefix(toolName, "mcp__") {
		return nil
	}
	s.mcp.mu.Lock()
	name, ok := s.mcp.server[toolName]
	s.mcp.mu.Unlock()
	if !ok {
		return nil
	}
	for _, st := range s.mcpStatus() {
		if st.Name == name {
			return &hooks.MCPServer{Name: name, Source: st.Source}
		}
	}
	return &hooks.MCPServer{Name: name}
}

// mcpDisallowed reports whether a bare DisallowedTools entry removes the
// tool: its name, its server (mcp__<server>) or a tool-name glob such as
// mcp__* or mcp__github__get_*. Entries with a rule specifier are deny
// rules, which the permission checker applies.
func mcpDisallowed(disallowed []string, name string) bool {
	for _, d := range disallowed {
		switch {
		case strings.Contains(d, "("):
			continue
		case strings.Contains(d, "*"):
			if ok, _ := path.Match(d, name); ok {
				return true
			}
		case d == name:
			return true
		case strings.HasPrefix(d, "mcp__") && !strings.Contains(d[len("mcp__"):], "__") && strings.HasPrefix(name, d+"__"):
			return true
		}
	}
	return false
}

// mcpStartTimeout is Options.MCPStartTimeout, else $MCP_TIMEOUT, else 30s.
func (s *session) mcpStartTimeout() time.Duration {
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
func (s *session) mcpStatus() []MCPServerStatus {
	switch {
	case s.mcp == nil:
		return []MCPServerStatus{}
	case s.mcp.clients == nil:
		return append(slices.Clone(s.mcp.failed), s.mcp.blocked...)
	default:
		return append(s.mcp.clients.Status(), s.mcp.blocked...)
	}
}

// mcpInit is the mcp_servers field of system/init.
func (s *session) mcpInit() []message.MCPServer {
	out := []message.MCPServer{}
	for _, st := range s.mcpStatus() {
		out = append(out, message.MCPServer{Name: st.Name, Status: st.Status, Source: st.Source})
	}
	return out
}

// closeMCP disconnects the servers and stops their processes.
func (s *session) closeMCP() {
	if s.mcp != nil && s.mcp.clients != nil {
		_ = s.mcp.clients.Close()
	}
}

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
			if slices.ContainsFunc(c.sess.mcp.blocked, func(b MCPServerStatus) bool { return b.Name == name }) {
				return nil, fmt.Errorf("%w: MCP server %q is %s", ErrManagedPolicyDenied, name, st.Error)
			}
			if c.sess.mcp.clients == nil {
				return nil, fmt.Errorf("agentloop: MCP server %q: %s", name, st.Error)
			}
			return c.sess.mcp.clients, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNoMCPServer, name)
}

// envLookup finds a variable in the session's tool environment.
func (s *session) envLookup(key string) (string, bool) {
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

// expandMCPEnv expands ${VAR} and ${VAR:-default} in a .mcp.json
// server's command, args, env values, url and header values, as the
// reference does. It returns the variables that are unset and have no
// default.
func expandMCPEnv(c MCPServerConfig, lookup func(string) (string, bool)) (MCPServerConfig, []string) {
	var missing []string
	expand := func(v string) string {
		var b strings.Builder
		for {
			i := strings.Index(v, "${")
			if i < 0 {
				break
			}
			j := strings.IndexByte(v[i:], '}')
			if j < 0 {
				break
			}
			b.WriteString(v[:i])
			name, def, hasDef := strings.Cut(v[i+2:i+j], ":-")
			if val, ok := lookup(name); ok {
				b.WriteString(val)
			} else if hasDef {
				b.WriteString(def)
			} else if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			v = v[i+j+1:]
		}
		b.WriteString(v)
		return b.String()
	}
	c.Command, c.URL = expand(c.Command), expand(c.URL)
	c.Args = slices.Clone(c.Args)
	for i := range c.Args {
		c.Args[i] = expand(c.Args[i])
	}
	c.Env, c.Headers = expandValues(c.Env, expand), expandValues(c.Headers, expand)
	return c, missing
}

func expandValues(m map[string]string, expand func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}
