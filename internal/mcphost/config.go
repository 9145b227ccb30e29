// Package mcphost holds a session's MCP servers: it reads their
// configurations (.mcp.json, the options, plugins), checks and prepares
// them, starts them through the session's connector and keeps the tools
// they offer, their status and which server owns which tool. The MCP SDK
// itself stays behind tool.MCPConnector (package agentloop/mcp), so this
// package, like the rest of the core, does not import it.
package mcphost

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/tool"
)

// ParseConfig reads MCP server configurations in the reference's format,
// {"mcpServers": {"<name>": {...}}}, as in .mcp.json and the CLI's
// --mcp-config. A server's "timeout" is in milliseconds (values under 1000
// are ignored). An unknown type, a stdio server without a command or an
// http/sse server without a url is an error naming the server.
func ParseConfig(data []byte) (map[string]tool.MCPServerConfig, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	if doc.MCPServers == nil {
		return nil, errors.New(`mcp config: no "mcpServers" object`)
	}
	out := make(map[string]tool.MCPServerConfig, len(doc.MCPServers))
	for name, raw := range doc.MCPServers {
		var c tool.MCPServerConfig
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
		if err := CheckServer(name, c); err != nil {
			return nil, fmt.Errorf("mcp config: %w", err)
		}
		out[name] = c
	}
	return out, nil
}

// CheckServer reports what makes a configuration unusable: no name, a
// transport without its command or url, an unknown type, a tool policy
// outside the vocabulary.
func CheckServer(name string, c tool.MCPServerConfig) error {
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
	return checkPolicies(name, c)
}

// checkPolicies reports a tool policy entry without a name or with a
// value outside its vocabulary.
func checkPolicies(name string, c tool.MCPServerConfig) error {
	for i, p := range c.Tools {
		if p.Name == "" {
			return fmt.Errorf("server %q: tools[%d] has no name", name, i)
		}
		switch p.PermissionPolicy {
		case "", tool.MCPAlwaysAllow, tool.MCPAlwaysAsk, tool.MCPAlwaysDeny:
		default:
			return fmt.Errorf("server %q: tool %q: unknown permission_policy %q (want always_allow, always_ask or always_deny)", name, p.Name, p.PermissionPolicy)
		}
		switch p.OrgMaxPermission {
		case "", "allow", "ask", "blocked":
		default:
			return fmt.Errorf("server %q: tool %q: unknown org_max_permission %q (want allow, ask or blocked)", name, p.Name, p.OrgMaxPermission)
		}
	}
	return nil
}

// IsSDK reports whether c is an in-process (sdk) server.
func IsSDK(c tool.MCPServerConfig) bool {
	return c.Type == tool.MCPSDK || (c.Type == "" && c.Server != nil)
}

// Prepare settles servers in place before they start: it fills in the
// defaults of the environment (MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS,
// read through getenv; a malformed value goes to option) and drops, each
// with a report, the tool policies the session does not honour: every
// org_max_permission (there is no organisation policy here), and
// always_allow on an in-process (sdk) server, where the reference honours
// only always_ask and always_deny.
func Prepare(servers map[string]tool.MCPServerConfig, getenv func(string) string, report, option func(string)) {
	envInt := func(key string) int {
		v := getenv(key)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			option(fmt.Sprintf("%s=%q is not a positive integer; ignored", key, v))
			return 0
		}
		return n
	}
	callTimeout := time.Duration(envInt("MCP_TOOL_TIMEOUT")) * time.Millisecond
	maxTokens := envInt("MAX_MCP_OUTPUT_TOKENS")
	for name, c := range servers {
		if c.Timeout == 0 && callTimeout > 0 {
			c.Timeout = callTimeout
		}
		if c.MaxOutputTokens == 0 && maxTokens > 0 {
			c.MaxOutputTokens = maxTokens
		}
		var kept []tool.MCPToolPolicy
		for _, p := range c.Tools {
			if p.OrgMaxPermission != "" {
				report(fmt.Sprintf("MCP server %q: tool %q: org_max_permission %q is not honoured (agentloop has no organisation policy)", name, p.Name, p.OrgMaxPermission))
				p.OrgMaxPermission = ""
			}
			if IsSDK(c) && p.PermissionPolicy == tool.MCPAlwaysAllow {
				report(fmt.Sprintf("MCP server %q: tool %q: permission_policy always_allow is not honoured on an sdk server (only always_ask and always_deny are)", name, p.Name))
				p.PermissionPolicy = ""
			}
			if p.PermissionPolicy != "" {
				kept = append(kept, p)
			}
		}
		c.Tools = kept
		servers[name] = c
	}
}

// Disallowed reports whether a bare DisallowedTools entry removes the
// tool: its name, its server (mcp__<server>) or a tool-name glob such as
// mcp__* or mcp__github__get_*. Entries with a rule specifier are deny
// rules, which the permission checker applies.
func Disallowed(disallowed []string, name string) bool {
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

// ExpandEnv expands ${VAR} and ${VAR:-default} in a .mcp.json server's
// command, args, env values, url and header values, as the reference
// does. It returns the variables that are unset and have no default.
func ExpandEnv(c tool.MCPServerConfig, lookup func(string) (string, bool)) (tool.MCPServerConfig, []string) {
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

// expandValues is m with expand applied to each value; nil stays nil.
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
