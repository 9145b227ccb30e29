package conversation

import (
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/tool"
)

// An MCP server's tools can change while the session lives (see
// tool.MCPToolWatcher): the session follows them, and the engine declares
// the new set from its next model request (engine.Session.ReplaceTools).

// watchMCP makes the session follow its MCP servers' tools; it runs once
// the engine exists.
func (s *session) watchMCP() {
	if s.mcp == nil || s.mcp.clients == nil {
		return
	}
	if w, ok := s.mcp.clients.(tool.MCPToolWatcher); ok {
		w.WatchTools(s.mcpToolsChanged)
	}
}

// mcpToolsChanged replaces the tools of server with ts (less those
// DisallowedTools removes), in the session's list and in the engine. It
// runs on the MCP clients' goroutines.
func (s *session) mcpToolsChanged(server string, ts []tool.Tool) {
	ts = slices.DeleteFunc(slices.Clone(ts), func(t tool.Tool) bool {
		return mcpDisallowed(s.opts.DisallowedTools, t.Info().Name)
	})
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	var old []string
	for name, srv := range s.mcp.server {
		if srv == server {
			old = append(old, name)
		}
	}
	if err := s.eng.ReplaceTools(old, ts); err != nil {
		s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q changed its tools, but they cannot be offered: %v; its tools stay as they were", server, err))
		return
	}
	s.mcp.tools = slices.DeleteFunc(s.mcp.tools, func(t tool.Tool) bool { return slices.Contains(old, t.Info().Name) })
	for _, n := range old {
		delete(s.mcp.server, n)
	}
	for _, t := range ts {
		s.mcp.tools = append(s.mcp.tools, t)
		s.mcp.server[t.Info().Name] = server
		s.mcp.known[t.Info().Name] = true
	}
	s.syncLoops() // running subagents follow (mcp_subagent.go)
}
