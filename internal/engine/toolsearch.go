package engine

import (
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/model"
)

// Tool search: the tools of Config.Deferred are runnable from the start
// but declared only once loaded. Which ones are loaded is read from the
// history at each request (toolsearch.Loaded): a ToolSearch result that
// shows a tool's definition loads it for every later request, across runs
// and after a resume, without state kept beside the history.

// declaredTools returns the tool definitions of the next request: every
// tool in declaration order, less the deferred tools not loaded yet.
func (s *Session) declaredTools() []model.ToolDef {
	var loaded map[string]bool
	deferred := s.cfg.Deferred
	if deferred.Len() > 0 {
		loaded = toolsearch.Loaded(s.history, deferred)
	}
	var out []model.ToolDef
	for _, name := range s.order {
		if _, isDeferred := deferred.Lookup(name); isDeferred && !loaded[name] {
			continue
		}
		e := s.tools[name]
		out = append(out, model.ToolDef{
			Name: e.info.Name, Description: e.info.Description, InputSchema: e.info.InputSchema,
		})
	}
	return out
}

// deferredSystem is the system block that names the deferred tools and
// says how to load them, or nothing when no tool is deferred.
func (s *Session) deferredSystem() []model.Content {
	if s.cfg.Deferred.Len() == 0 {
		return nil
	}
	return []model.Content{model.TextBlock(toolsearch.Announcement(s.cfg.Deferred))}
}

// noteUnloaded adds toolsearch.Note (the input schema, and how to load the
// tool) to the error result of a call of a deferred tool that was not
// loaded when it was called: the model called it blind, and the note
// tells it what the tool takes.
func (s *Session) noteUnloaded(name string, o outcome) outcome {
	if o.block.IsError == nil || !*o.block.IsError {
		return o
	}
	info, ok := s.cfg.Deferred.Lookup(name)
	if !ok || toolsearch.Loaded(s.history, s.cfg.Deferred)[name] {
		return o
	}
	note := toolsearch.Note(info)
	switch {
	case len(o.block.Blocks) > 0:
		o.block.Blocks = append(append([]model.Content(nil), o.block.Blocks...), model.TextBlock(note))
	case o.block.Text != "":
		o.block.Text += "\n\n" + note
	default:
		o.block.Text = note
	}
	return o
}
