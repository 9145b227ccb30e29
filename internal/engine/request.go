package engine

import (
	"encoding/json"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

var ephemeral = &model.CacheControl{Type: "ephemeral"}

// buildRequest assembles the next request: system prompt, tool definitions
// and the whole history, with prompt-cache breakpoints on the last system
// block and on the last block of the last message. The history itself is
// not modified.
func (s *Session) buildRequest(modelID string) *model.Request {
	req := &model.Request{
		Model:     modelID,
		MaxTokens: s.cfg.MaxTokens,
		Thinking:  s.cfg.Thinking,
		Stream:    true,
		Betas:     s.cfg.Betas,
	}
	if req.MaxTokens == 0 {
		p, _, ok := pricing.Lookup(modelID)
		req.MaxTokens = int(p.MaxOutput)
		if !ok || req.MaxTokens == 0 {
			req.MaxTokens = 32000
		}
	}
	if s.cfg.Effort != "" {
		req.Output = &model.OutputConfig{Effort: s.cfg.Effort}
	}
	if n := len(s.cfg.System); n > 0 {
		req.System = append([]model.Content(nil), s.cfg.System...)
		req.System[n-1].CacheControl = ephemeral
	}
	for _, name := range s.order {
		e := s.tools[name]
		req.Tools = append(req.Tools, model.ToolDef{
			Name: e.info.Name, Description: e.info.Description, InputSchema: e.info.InputSchema,
		})
	}
	meta, _ := json.Marshal(map[string]string{"session_id": s.cfg.Env.SessionID})
	req.Metadata = &model.Metadata{UserID: string(meta)}
	req.Messages = make([]model.Message, len(s.history))
	copy(req.Messages, s.history)
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
