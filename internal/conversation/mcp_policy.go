package conversation

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/agentloop/agentloop/tool"
)

// This file holds what the session settles about its MCP servers before
// they start and while they run: the defaults it takes from the
// environment ($MCP_TOOL_TIMEOUT, $MAX_MCP_OUTPUT_TOKENS), the per-tool
// permission policies it does not honour (reported), the events the
// connector reports (diagnostics), and the reconnection of failed servers
// before each query.

// checkMCPPolicies reports what makes a server's tool policies unusable.
func checkMCPPolicies(name string, c MCPServerConfig) error {
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

// prepareMCPServers fills in the defaults of the environment and drops,
// with a diagnostic, the policies the session does not honour: every
// org_max_permission (there is no organisation policy here), and
// always_allow on an in-process (sdk) server, where the reference honours
// only always_ask and always_deny.
func (s *session) prepareMCPServers(servers map[string]MCPServerConfig) {
	callTimeout := s.mcpEnvMillis("MCP_TOOL_TIMEOUT")
	maxTokens := s.mcpEnvInt("MAX_MCP_OUTPUT_TOKENS")
	for name, c := range servers {
		if c.Timeout == 0 && callTimeout > 0 {
			c.Timeout = callTimeout
		}
		if c.MaxOutputTokens == 0 && maxTokens > 0 {
			c.MaxOutputTokens = maxTokens
		}
		sdkServer := c.Type == tool.MCPSDK || (c.Type == "" && c.Server != nil)
		var kept []tool.MCPToolPolicy
		for _, p := range c.Tools {
			if p.OrgMaxPermission != "" {
				s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q: tool %q: org_max_permission %q is not honoured (agentloop has no organisation policy)", name, p.Name, p.OrgMaxPermission))
				p.OrgMaxPermission = ""
			}
			if sdkServer && p.PermissionPolicy == tool.MCPAlwaysAllow {
				s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q: tool %q: permission_policy always_allow is not honoured on an sdk server (only always_ask and always_deny are)", name, p.Name))
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

// mcpEnvMillis reads a positive number of milliseconds from the process
// environment; 0 when unset or invalid (reported).
func (s *session) mcpEnvMillis(key string) time.Duration {
	return time.Duration(s.mcpEnvInt(key)) * time.Millisecond
}

// mcpEnvInt reads a positive integer from the process environment (as
// MCP_TIMEOUT is read); 0 when unset or invalid (reported).
func (s *session) mcpEnvInt(key string) int {
	v := os.Getenv(key)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		s.diag.Add(DiagOption, fmt.Sprintf("%s=%q is not a positive integer; ignored", key, v))
		return 0
	}
	return n
}

// reportMCP passes what the clients report (server log messages, large or
// cut results, reconnections) to the diagnostics channel.
func (s *session) reportMCP(clients MCPClients) {
	if r, ok := clients.(tool.MCPReporter); ok {
		r.ReportTo(func(server, text string) {
			s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q: %s", server, text))
		})
	}
}

// retryMCP starts, before a query, the background reconnection of the
// servers that are failed (not disabled). It does not wait: a server that
// connects joins from the next model request (mcp_toolset.go).
func (s *session) retryMCP() {
	if s.mcp == nil || s.mcp.clients == nil {
		return
	}
	if r, ok := s.mcp.clients.(tool.MCPRetrier); ok {
		r.RetryFailed()
	}
}
