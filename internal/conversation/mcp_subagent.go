package conversation

import (
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/tool"
)

// Subagents follow the MCP servers' tools as the main loop does. A
// subagent is built from its parent's tool names as they were when the
// parent started, so on its way in (followMCP) it is brought up to the
// tools offered now; while it runs, it gets each later change. Either way
// the change reaches it from its next model request
// (engine.Session.ReplaceTools), within what its definition allows: the
// tools its parent may have, less those its definition's tools list
// leaves out and its disallowedTools (and the session's) remove.

// mcpLoop is a running subagent, as its MCP tools are concerned.
type mcpLoop struct {
	eng       *engine.Session
	parent    string   // the parent loop's agent id ("" for the main loop)
	requested []string // its definition's tools (nil: all its parent's)
	removed   []string // its definition's disallowedTools
	has       []string // the MCP server tools it has now
}

// followMCP makes the subagent agent of the loop parent, running on child
// with the definition def, follow the MCP servers' tools until the
// function it returns is called. A change made while child was being
// built is applied at once.
func (s *session) followMCP(child *engine.Session, parent, agent lineage.Agent, def AgentDefinition) func() {
	if s.mcp == nil || child == nil {
		return func() {}
	}
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	l := &mcpLoop{eng: child, parent: parent.ID, requested: def.Tools, removed: def.DisallowedTools}
	for _, n := range child.ToolNames() {
		if s.mcp.known[n] {
			l.has = append(l.has, n)
		}
	}
	if s.mcp.loops == nil {
		s.mcp.loops = map[string]*mcpLoop{}
	}
	s.mcp.loops[agent.ID] = l
	s.syncLoop(agent.ID, l, false)
	return func() {
		s.mcp.mu.Lock()
		defer s.mcp.mu.Unlock()
		delete(s.mcp.loops, agent.ID)
	}
}

// syncLoops brings every running subagent's MCP tools up to date after a
// change; s.mcp.mu is held.
func (s *session) syncLoops() {
	for id, l := range s.mcp.loops {
		s.syncLoop(id, l, true)
	}
}

// syncLoop gives the subagent id the MCP tools it may have now, from its
// next model request: when their names differ from those it has, or
// always when changed (a tool may keep its name and change its
// definition); s.mcp.mu is held.
func (s *session) syncLoop(id string, l *mcpLoop, changed bool) {
	want := s.mcpToolsOf(id)
	names := make([]string, 0, len(want))
	for _, t := range want {
		names = append(names, t.Info().Name)
	}
	if !changed && sameNames(names, l.has) {
		return
	}
	if changed && len(names) == 0 && len(l.has) == 0 {
		return
	}
	if err := l.eng.ReplaceTools(l.has, want); err != nil {
		s.diag.Add(DiagMCP, fmt.Sprintf("subagent %s: the MCP servers' tools changed, but they cannot be offered to it: %v", id, err))
		return
	}
	l.has = names
}

// mcpToolsOf are the MCP server tools (not the resource tools, which every
// loop keeps) the loop id may have now; s.mcp.mu is held.
func (s *session) mcpToolsOf(id string) []tool.Tool {
	var out []tool.Tool
	for _, t := range s.mcp.tools {
		n := t.Info().Name
		if _, ok := s.mcp.server[n]; ok && s.mcpAllowedIn(id, n, 0) {
			out = append(out, t)
		}
	}
	return out
}

// mcpAllowedIn reports whether the loop id may have the MCP tool name:
// the main loop has all the session offers; a subagent, what its parent
// may have, its definition asks for and does not remove. depth guards
// against a cycle.
func (s *session) mcpAllowedIn(id, name string, depth int) bool {
	if id == "" {
		return true
	}
	l, ok := s.mcp.loops[id]
	if !ok || depth > 64 {
		return false
	}
	switch {
	case l.requested != nil && !slices.Contains(l.requested, name),
		slices.Contains(l.removed, name),
		s.lin != nil && s.lin.Disallowed(name):
		return false
	}
	return s.mcpAllowedIn(l.parent, name, depth+1)
}

// sameNames reports whether a and b hold the same names.
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	return true
}
