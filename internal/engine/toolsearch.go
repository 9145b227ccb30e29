package engine

import (
	"bytes"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/model"
)

// Tool search: the tools of Config.Deferred are runnable from the start
// but declared only once loaded. Which ones are loaded is read from the
// history at each request (toolsearch.Loaded): a ToolSearch result that
// shows a tool's definition loads it for every later request, across runs
// and after a resume, without state kept beside the history.
//
// With a provider that loads deferred tools itself (model.ToolReferencer,
// the Messages API) the session does what the reference does: a loaded
// tool is declared with defer_loading, a ToolSearch result that loads
// tools is a list of tool_reference blocks, each request sends the beta
// model.ToolSearchBeta and adds toolsearch.LoadedText after such a result.
// Other providers get the definitions as text.

// toolRefs reports whether the session defers tools, the API's betas are
// not switched off (Config.NoToolReferences), its model is one
// the API's tool search serves (toolsearch.ModelSupported) and its
// provider loads them from tool_reference blocks.
func (s *Session) toolRefs() bool {
	if s.cfg.Deferred.Len() == 0 || s.cfg.NoToolReferences || !toolsearch.ModelSupported(s.cfg.Model) {
		return false
	}
	r, ok := s.cfg.Provider.(model.ToolReferencer)
	return ok && r.ToolReferences()
}

// referTools turns the result of a ToolSearch call that loaded tools into
// tool_reference blocks naming them, when the provider takes those.
func (s *Session) referTools(name string, o outcome) outcome {
	if name != toolsearch.ToolName || (o.block.IsError != nil && *o.block.IsError) || !s.toolRefs() {
		return o
	}
	refs := toolsearch.References(o.block.ResultText(), s.cfg.Deferred)
	if len(refs) == 0 {
		return o
	}
	o.block.Text, o.block.Blocks = "", refs
	return o
}

// withLoadedText returns msgs with toolsearch.LoadedText after each
// tool_result of tool_reference blocks, as the reference sends them; the
// history keeps the result alone. msgs is not modified.
func withLoadedText(msgs []model.Message) []model.Message {
	var out []model.Message
	for i, m := range msgs {
		if m.Role != "user" || !hasReferences(m.Content) {
			continue
		}
		if out == nil {
			out = append([]model.Message(nil), msgs...)
		}
		var blocks []model.Content
		for _, b := range m.Content {
			blocks = append(blocks, b)
			if b.Type == model.TypeToolResult && hasReferences(b.Blocks) {
				blocks = append(blocks, model.TextBlock(toolsearch.LoadedText))
			}
		}
		out[i] = model.Message{Role: m.Role, Content: blocks}
	}
	if out == nil {
		return msgs
	}
	return out
}

// hasReferences reports whether blocks hold a tool_reference, directly
// or inside a tool_result.
func hasReferences(blocks []model.Content) bool {
	for _, b := range blocks {
		if b.Type == model.TypeToolReference || (b.Type == model.TypeToolResult && hasReferences(b.Blocks)) {
			return true
		}
	}
	return false
}

// declaredTools returns the tool definitions of the next request: every
// tool in declaration order, less the deferred tools not loaded yet; a
// loaded deferred tool is declared with DeferLoading when the provider
// takes tool_reference blocks. The slice is shared by the session's
// requests while the definitions stay the same (requests only read it):
// a session keeps its latest request (SentRequest), so a copy per request
// would be a copy per session.
func (s *Session) declaredTools() []model.ToolDef {
	var loaded map[string]bool
	deferred := s.cfg.Deferred
	if deferred.Len() > 0 {
		loaded = toolsearch.Loaded(s.history, deferred)
	}
	refs := s.toolRefs()
	def := func(i int) (model.ToolDef, bool) {
		name := s.tools[i].name
		_, isDeferred := deferred.Lookup(name)
		if isDeferred && !loaded[name] {
			return model.ToolDef{}, false
		}
		info := s.tools[i].info()
		return model.ToolDef{
			Name: name, Description: info.Description, InputSchema: info.InputSchema,
			DeferLoading: isDeferred && refs,
		}, true
	}
	same := func(last *[]model.ToolDef) bool {
		if last == nil {
			return false
		}
		j := 0
		for i := range s.tools {
			d, ok := def(i)
			if !ok {
				continue
			}
			if j == len(*last) || !sameToolDef(&(*last)[j], &d) {
				return false
			}
			j++
		}
		return j == len(*last)
	}
	if last := s.toolDefs.Load(); same(last) {
		return *last
	}
	// Sessions with the same tools declare the same definitions: the
	// slice made last, by any session, is shared when it fits.
	if last := lastToolDefs.Load(); same(last) {
		s.toolDefs.Store(last)
		return *last
	}
	out := make([]model.ToolDef, 0, len(s.tools))
	for i := range s.tools {
		if d, ok := def(i); ok {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	s.toolDefs.Store(&out)
	lastToolDefs.Store(&out)
	return out
}

// lastToolDefs is the slice of tool definitions a session made last, for
// the next session with the same definitions. It keeps one list alive.
var lastToolDefs atomic.Pointer[[]model.ToolDef]

// sameToolDef reports whether a and b, as declaredTools makes them, are
// the same definition. Strings and schemas that share their bytes compare
// in constant time.
func sameToolDef(a, b *model.ToolDef) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema) &&
		a.DeferLoading == b.DeferLoading && a.Type == b.Type && len(a.Extra) == 0 && len(b.Extra) == 0
}

// deferredText is the text of the system block that names the deferred
// tools and says how to load them, or "" when no tool is deferred.
func (s *Session) deferredText() string {
	if s.cfg.Deferred.Len() == 0 {
		return ""
	}
	return toolsearch.Announcement(s.cfg.Deferred)
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
