package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/tool"
)

// The session's tool set can change while it lives (an MCP server that
// connects late, announces tools/list_changed, or is toggled). Such a
// change is queued by ReplaceTools from any goroutine and applied by the
// loop goroutine right before its next model request, so the tools of a
// request and of the tool batch that answers it never change under it.
// A call of a tool removed meanwhile gets the is_error result of an
// unknown tool, which keeps the history valid.

// toolChanges are the changes queued since the last request.
type toolChanges struct {
	mu sync.Mutex
	q  []toolChange
}

type toolChange struct {
	remove []string
	add    []toolEntry
}

// ReplaceTools removes the tools named in remove and adds the tools of
// add (a tool whose name the session has replaces it in place), from the
// next model request on. It is safe for concurrent use, also while a run
// streams: the change waits for the loop to finish the current request
// and its tool batch. A deferrable tool (tool.Info.Deferrable) joins the
// tool search catalog when the session has one, else it is declared.
// Changes apply in the order they were made. The error names an invalid
// tool; nothing is queued then.
func (s *Session) ReplaceTools(remove []string, add []tool.Tool) error {
	c := toolChange{remove: slices.Clone(remove)}
	seen := map[string]bool{}
	for _, t := range add {
		if t == nil {
			return errors.New("engine: ReplaceTools: nil tool")
		}
		if err := tool.Check(t); err != nil {
			return fmt.Errorf("engine: ReplaceTools: %w", err)
		}
		info := t.Info()
		if info.Name == "" {
			return errors.New("engine: ReplaceTools: a tool has no name")
		}
		if seen[info.Name] {
			return fmt.Errorf("engine: ReplaceTools: two tools are named %q", info.Name)
		}
		seen[info.Name] = true
		schema, err := tool.CompileSchema(info.InputSchema)
		if err != nil {
			return fmt.Errorf("engine: ReplaceTools: tool %q: %w", info.Name, err)
		}
		c.add = append(c.add, toolEntry{name: info.Name, tool: t, schema: schema})
	}
	s.changes.mu.Lock()
	s.changes.q = append(s.changes.q, c)
	s.changes.mu.Unlock()
	return nil
}

// applyToolChanges applies the queued changes; loop goroutine only.
func (s *Session) applyToolChanges() {
	s.changes.mu.Lock()
	q := s.changes.q
	s.changes.q = nil
	s.changes.mu.Unlock()
	for _, c := range q {
		s.applyToolChange(c)
	}
}

func (s *Session) applyToolChange(c toolChange) {
	gone := map[string]bool{}
	for _, n := range c.remove {
		gone[n] = true
	}
	added := map[string]int{} // name → index in c.add
	for i, e := range c.add {
		delete(gone, e.name) // replaced in place below
		added[e.name] = i
	}
	// A new table: entries handed out before (a pending call's) stay as
	// they were.
	tools := make([]toolEntry, 0, len(s.tools)+len(c.add))
	for _, e := range s.tools {
		if gone[e.name] {
			continue
		}
		if i, ok := added[e.name]; ok {
			e = c.add[i]
			delete(added, e.name)
		}
		tools = append(tools, e)
	}
	var deferredOut []string
	var deferredIn []tool.Info
	for _, e := range c.add {
		if _, isNew := added[e.name]; isNew {
			tools = append(tools, e)
		}
		deferredOut = append(deferredOut, e.name)
		if info := e.info(); info.Deferrable() {
			deferredIn = append(deferredIn, info)
		}
	}
	s.mu.Lock() // Config reads the table from other goroutines
	s.tools = tools
	s.mu.Unlock()
	if s.cfg.Deferred != nil {
		s.cfg.Deferred.Replace(append(deferredOut, c.remove...), deferredIn)
	}
}
