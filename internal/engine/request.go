package engine

import (
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

var ephemeral = &model.CacheControl{Type: "ephemeral"}

// buildRequest assembles the next request: system prompt, tool definitions
// and the whole history, with prompt-cache breakpoints on the last system
// block and on the last block of the last message. The history itself is
// not modified.
func (s *Session) buildRequest(modelID string) *model.Request {
	_, thinking, effort := s.settings()
	thinking, output := requestFeatures(modelID, thinking, effort)
	req := &model.Request{
		Model:     modelID,
		MaxTokens: s.cfg.MaxTokens,
		Thinking:  thinking,
		Output:    output,
		Stream:    true,
		Betas:     s.cfg.Betas,
	}
	if cm := s.cfg.ContextManagement; cm != nil {
		req.ContextManagement = cm
		if !slices.Contains(req.Betas, model.ContextManagementBeta) {
			req.Betas = append(slices.Clip(req.Betas), model.ContextManagementBeta)
		}
	}
	if s.toolRefs() && !slices.Contains(req.Betas, model.ToolSearchBeta) {
		req.Betas = append(slices.Clip(req.Betas), model.ToolSearchBeta)
	}
	if n := s.cfg.TaskBudget; n > 0 {
		if req.Output == nil {
			req.Output = &model.OutputConfig{}
		} else {
			o := *req.Output
			req.Output = &o
		}
		req.Output.TaskBudget = &model.TaskBudget{Type: "tokens", Total: n}
		if !slices.Contains(req.Betas, model.TaskBudgetBeta) {
			req.Betas = append(slices.Clip(req.Betas), model.TaskBudgetBeta)
		}
	}
	if req.MaxTokens == 0 {
		p, _, ok := pricing.Lookup(modelID)
		req.MaxTokens = int(p.MaxOutput)
		if !ok || req.MaxTokens == 0 {
			req.MaxTokens = 32000
		}
	}
	req.System = s.systemBlocks()
	req.Tools = s.declaredTools()
	req.Metadata = s.metadata()
	req.Messages = make([]model.Message, len(s.history))
	copy(req.Messages, s.history)
	if !s.sealing() {
		req.Messages = s.unsealed(req.Messages)
	}
	if s.cfg.Deferred.Len() > 0 { // only a session that defers tools has references
		req.Messages = withLoadedText(req.Messages)
	}
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		if k := len(last.Content); k > 0 {
			blocks := append([]model.Content(nil), last.Content...)
			blocks[k-1].CacheControl = ephemeral
			req.Messages[n-1] = model.Message{Role: last.Role, Content: blocks}
		}
	}
	return req
}

// systemBlocks returns the system blocks of a request: the configured
// ones and the deferred tools' announcement, the last one with a cache
// breakpoint; nil when there are none. The slice is made once and shared
// by the session's requests while its parts stay the same (requests only
// read it), rather than copied for each request.
func (s *Session) systemBlocks() []model.Content {
	base, ann := s.cfg.System, s.deferredText()
	if c := s.sys.Load(); c.from(base, ann) {
		return c.blocks
	}
	// Sessions made from the same options share Config.System: the one
	// made last is shared by them all.
	if c := lastSystem.Load(); c.from(base, ann) {
		s.sys.Store(c)
		return c.blocks
	}
	var blocks []model.Content
	if n := len(base); n > 0 || ann != "" {
		blocks = make([]model.Content, 0, n+1)
		blocks = append(blocks, base...)
		if ann != "" {
			blocks = append(blocks, model.TextBlock(ann))
		}
		blocks[len(blocks)-1].CacheControl = ephemeral
	}
	c := &systemCache{base: base, ann: ann, blocks: blocks}
	s.sys.Store(c)
	lastSystem.Store(c)
	return blocks
}

// lastSystem is the systemCache a session made last, for the next
// session with the same system blocks. It keeps one system prompt alive.
var lastSystem atomic.Pointer[systemCache]

// from reports whether c was made from base and ann: the same configured
// blocks (the same slice) and the same announcement.
func (c *systemCache) from(base []model.Content, ann string) bool {
	return c != nil && len(c.base) == len(base) && (len(base) == 0 || &c.base[0] == &base[0]) && c.ann == ann
}

// systemCache is what systemBlocks made last, and from what.
type systemCache struct {
	base   []model.Content // Config.System
	ann    string          // the deferred tools' announcement
	blocks []model.Content
}

// requestFeatures decides the thinking and effort fields of a request from
// the model's capabilities (pricing's table, not guesses): models without a
// feature get requests without it, and models that support adaptive
// thinking get it by default. For models the table does not know, explicit
// settings are sent as given and nothing is added.
func requestFeatures(modelID string, thinking *model.Thinking, effort string) (*model.Thinking, *model.OutputConfig) {
	p, _, known := pricing.Lookup(modelID)
	caps := p.Caps
	var out *model.OutputConfig
	if effort != "" && (!known || caps.Effort) {
		out = &model.OutputConfig{Effort: effort}
	}
	if !known {
		return thinking, out
	}
	t := thinking
	if t == nil && caps.AdaptiveThinking {
		t = &model.Thinking{Type: string(vocab.ThinkingAdaptive)}
	}
	if t != nil {
		switch vocab.ThinkingType(t.Type) {
		case vocab.ThinkingAdaptive:
			if !caps.AdaptiveThinking {
				t = nil
			}
		default:
			if !caps.Thinking {
				t = nil
			}
		}
	}
	return t, out
}

// metadata returns the request metadata for the session's current id,
// made once per id (a /clear changes it) and shared by the requests,
// which never change it.
func (s *Session) metadata() *model.Metadata {
	id := s.cfg.Env.SessionID
	if m := s.meta.Load(); m != nil && m.id == id {
		return m.md
	}
	meta, _ := json.Marshal(map[string]string{"session_id": id})
	m := &sessionMeta{id: id, md: &model.Metadata{UserID: string(meta)}}
	s.meta.Store(m)
	return m.md
}

// sessionMeta is the metadata made for one session id.
type sessionMeta struct {
	id string
	md *model.Metadata
}
