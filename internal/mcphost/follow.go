package mcphost

import (
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/tool"
)

// The loops follow the servers' tools. When a server's tools change, the
// main loop (Watch) and every running subagent (Follow) get the change
// from their next model request (Loop.ReplaceTools). A subagent is built
// from its parent's tool names as they were when the parent started, so
// on its way in it is brought up to the tools offered now; it gets them
// within what its definition allows: the tools its parent may have, less
// those its definition's tools list leaves out and its disallowedTools
// (and the session's) remove.

// loop is a running subagent, as its MCP tools are concerned.
type loop struct {
	eng       Loop
	parent    string            // the parent loop's agent id ("" for the main loop)
	requested []string          // its definition's tools (nil: all its parent's)
	removed   []string          // its definition's disallowedTools
	denied    func(string) bool // the lineage's disallowed tools; may be nil
	has       []string          // the MCP server tools it has now
}

// Watch makes main, the main loop, follow the servers' tool changes.
func (h *Host) Watch(main Loop) {
	if h == nil || h.clients == nil {
		return
	}
	h.mu.Lock()
	h.main = main
	h.mu.Unlock()
	if w, ok := h.clients.(tool.MCPToolWatcher); ok {
		w.WatchTools(h.changed)
	}
}

// changed takes server's new tools ts.
func (h *Host) changed(server string, ts []tool.Tool) {
	ts = h.allowed(ts)
	h.mu.Lock()
	defer h.mu.Unlock()
	var old []string
	for name, srv := range h.server {
		if srv == server {
			old = append(old, name)
		}
	}
	if h.main != nil {
		if err := h.main.ReplaceTools(old, ts); err != nil {
			h.report(fmt.Sprintf("MCP server %q changed its tools, but they cannot be offered: %v; its tools stay as they were", server, err))
			return
		}
	}
	h.tools = slices.DeleteFunc(h.tools, func(t tool.Tool) bool { return slices.Contains(old, t.Info().Name) })
	for _, n := range old {
		delete(h.server, n)
	}
	for _, t := range ts {
		h.tools = append(h.tools, t)
		h.server[t.Info().Name] = server
		h.known[t.Info().Name] = true
	}
	for id, l := range h.loops {
		h.sync(id, l, true)
	}
}

// Follow makes the subagent agentID of the loop parentID, running on
// child, follow the servers' tools until the function it returns is
// called; requested and removed are its definition's tools and
// disallowedTools, denied the lineage's disallowed tools (nil for none).
// A change made while child was being built is applied at once.
func (h *Host) Follow(child Loop, parentID, agentID string, requested, removed []string, denied func(string) bool) (stop func()) {
	if h == nil || child == nil {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l := &loop{eng: child, parent: parentID, requested: requested, removed: removed, denied: denied}
	for _, n := range child.ToolNames() {
		if h.known[n] {
			l.has = append(l.has, n)
		}
	}
	if h.loops == nil {
		h.loops = map[string]*loop{}
	}
	h.loops[agentID] = l
	h.sync(agentID, l, false)
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.loops, agentID)
	}
}

// sync gives the subagent id the MCP tools it may have now: when their
// names differ from those it has, or always when changed (a tool may keep
// its name and change its definition); h.mu is held.
func (h *Host) sync(id string, l *loop, changed bool) {
	want := h.toolsOf(id)
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
		h.report(fmt.Sprintf("subagent %s: the MCP servers' tools changed, but they cannot be offered to it: %v", id, err))
		return
	}
	l.has = names
}

// toolsOf are the MCP server tools (not the resource tools, which every
// loop keeps) the loop id may have now; h.mu is held.
func (h *Host) toolsOf(id string) []tool.Tool {
	var out []tool.Tool
	for _, t := range h.tools {
		n := t.Info().Name
		if _, ok := h.server[n]; ok && h.allowedIn(id, n, 0) {
			out = append(out, t)
		}
	}
	return out
}

// allowedIn reports whether the loop id may have the MCP tool name: the
// main loop has all the session offers; a subagent, what its parent may
// have, its definition asks for and does not remove. depth guards
// against a cycle.
func (h *Host) allowedIn(id, name string, depth int) bool {
	if id == "" {
		return true
	}
	l, ok := h.loops[id]
	if !ok || depth > 64 {
		return false
	}
	switch {
	case l.requested != nil && !slices.Contains(l.requested, name),
		slices.Contains(l.removed, name),
		l.denied != nil && l.denied(name):
		return false
	}
	return h.allowedIn(l.parent, name, depth+1)
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
