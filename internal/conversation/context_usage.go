package conversation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// ContextUsage is agentloop.ContextUsage as the session reads it; the fields are
// documented there.
type ContextUsage struct {
	Categories           []ContextCategory `json:"categories"`
	TotalTokens          int64             `json:"totalTokens"`
	MaxTokens            int64             `json:"maxTokens"`
	Percentage           float64           `json:"percentage"`
	Model                string            `json:"model"`
	AutoCompactThreshold int64             `json:"autoCompactThreshold"`
	IsAutoCompactEnabled bool              `json:"isAutoCompactEnabled"`
	Measured             string            `json:"measured"`
	FromAPIUsage         bool              `json:"fromApiUsage"`
	MessageBreakdown     *MessageBreakdown `json:"messageBreakdown,omitempty"`
}

// ContextCategory is agentloop.ContextCategory as the session reads it; the fields are
// documented there.
type ContextCategory struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
	Kind   string `json:"kind"`
}

// The category ids.
const (
	ContextSystemPrompt      = "system_prompt"
	ContextSystemTools       = "system_tools"
	ContextMemoryFiles       = "memory_files"
	ContextMessages          = "messages"
	ContextFreeSpace         = "free_space"
	ContextAutocompactBuffer = "autocompact_buffer"
)

// DefaultContextWindow is the window assumed for a model pricing's table
// does not know.
const DefaultContextWindow = 200_000

// ContextUsage is agentloop's Client.ContextUsage; see its doc there.
func (c *Client) ContextUsage(ctx context.Context) (*ContextUsage, error) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return nil, ErrClosed
	case c.active != nil:
		c.mu.Unlock()
		req := c.sess.engine().SentRequest()
		if req == nil {
			return nil, ErrBusy
		}
		return c.sess.contextUsage(ctx, req)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	q := &activeQuery{cancel: cancel}
	c.active = q
	c.mu.Unlock()
	defer c.endQuery(q)
	return c.sess.ContextUsage(ctx)
}

// ContextUsage measures what the session's next request would hold, by
// category (system prompt, tools, memory files, messages…), against the
// model's context window. It counts tokens through the provider when the
// provider can (model.TokenCounter: requests of their own), else it
// estimates them. It must not run while a turn does (Client measures the
// running turn's request itself).
func (s *Session) ContextUsage(ctx context.Context) (*ContextUsage, error) {
	return s.contextUsage(ctx, s.engine().ContextRequest())
}

// contextUsage measures the session's context as req sends it.
func (s *Session) contextUsage(ctx context.Context, req *model.Request) (*ContextUsage, error) {
	modelID := req.Model
	window, maxOut := int64(DefaultContextWindow), int64(req.MaxTokens)
	if p, _, ok := pricing.Lookup(modelID); ok && p.ContextWindow > 0 {
		window = p.ContextWindow
	}
	parts, err := s.measure(ctx, req)
	if err != nil {
		return nil, err
	}
	compactWindow, pct := window, 0.0
	if c := s.compactCfg; c != nil {
		if c.Window > 0 {
			compactWindow = c.Window
		}
		pct = c.ThresholdPercent
	}
	u := &ContextUsage{Model: modelID, MaxTokens: window, Measured: parts.how,
		AutoCompactThreshold: engine.AutoCompactThresholdPercent(compactWindow, maxOut, pct),
		IsAutoCompactEnabled: s.autoCompactOn()}
	u.TotalTokens = parts.total
	if last, _, ok := s.engine().LastUsage(); ok {
		u.TotalTokens = last.InputTokens + last.CacheCreationInputTokens + last.CacheReadInputTokens + last.OutputTokens
		u.FromAPIUsage = true
	}
	// The API's total is exact; the split follows the counts, and the
	// messages take what the other parts leave.
	msgs := max(u.TotalTokens-parts.system-parts.tools-parts.memory, 0)
	used := []ContextCategory{
		{ID: ContextSystemPrompt, Name: "System prompt", Tokens: parts.system, Kind: "used"},
		{ID: ContextSystemTools, Name: "System tools", Tokens: parts.tools, Kind: "used"},
		{ID: ContextMemoryFiles, Name: "Memory files", Tokens: parts.memory, Kind: "used"},
		{ID: ContextMessages, Name: "Messages", Tokens: msgs, Kind: "used"},
	}
	// Counts can exceed a small total from the API (a resumed session's
	// first reply, say): then the total is what the parts add up to.
	var sum int64
	for _, c := range used {
		sum += c.Tokens
	}
	u.TotalTokens = sum
	// With automatic compaction on, the part of the window above the
	// threshold is not free: reaching it compacts the conversation.
	var buffer int64
	if u.IsAutoCompactEnabled {
		buffer = min(max(window-u.AutoCompactThreshold, 0), max(window-sum, 0))
	}
	u.Categories = append(used, ContextCategory{ID: ContextFreeSpace, Name: "Free space",
		Tokens: max(window-sum-buffer, 0), Kind: "free"})
	if u.IsAutoCompactEnabled {
		u.Categories = append(u.Categories, ContextCategory{ID: ContextAutocompactBuffer, Name: "Autocompact buffer",
			Tokens: buffer, Kind: "reserved"})
	}
	u.MessageBreakdown = breakdownMessages(req.Messages, s.memoryText())
	if window > 0 {
		u.Percentage = float64(sum) * 100 / float64(window)
	}
	return u, nil
}

// contextParts are the measured parts of a request, in tokens.
type contextParts struct {
	system, tools, memory, total int64
	how                          string
}

// memoryText is the CLAUDE.md block the session sends in its first user
// message (memory.go), for the memory_files category; it is counted out of
// the messages.
func (s *Session) memoryText() string { return s.memory }

// measure sizes the system prompt, the tools, the memory and the whole
// request, with the provider's counter when it has one. Each part is the
// difference between two counts that differ only by that part, so the
// counter's fixed overhead falls to the messages.
func (s *Session) measure(ctx context.Context, req *model.Request) (contextParts, error) {
	count := estimateTokens
	how := "estimate"
	if tc, ok := s.env.Provider.(model.TokenCounter); ok {
		how = "count_tokens"
		count = func(ctx context.Context, r *model.Request) (int64, error) {
			n, err := tc.CountTokens(ctx, r)
			if err != nil {
				return 0, fmt.Errorf("agentloop: context usage: counting tokens: %w", err)
			}
			return n, nil
		}
	}
	probe := []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(".")}}}
	base := &model.Request{Model: req.Model, Messages: probe, Betas: req.Betas}
	withSystem := *base
	withSystem.System = req.System
	withTools := withSystem
	withTools.Tools = req.Tools
	var p contextParts
	p.how = how
	c0, err := count(ctx, base)
	if err != nil {
		return p, err
	}
	c1, err := count(ctx, &withSystem)
	if err != nil {
		return p, err
	}
	c2, err := count(ctx, &withTools)
	if err != nil {
		return p, err
	}
	p.system, p.tools = max(c1-c0, 0), max(c2-c1, 0)
	if mem := s.memoryText(); mem != "" {
		m := *base
		m.Messages = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(mem)}}}
		cm, err := count(ctx, &m)
		if err != nil {
			return p, err
		}
		p.memory = max(cm-c0, 0)
	}
	p.total = c2
	if len(req.Messages) > 0 {
		full := &model.Request{Model: req.Model, Messages: req.Messages, System: req.System,
			Tools: req.Tools, Thinking: req.Thinking, Betas: req.Betas}
		if p.total, err = count(ctx, full); err != nil {
			return p, err
		}
	}
	return p, nil
}

// estimateTokens is a provider-free estimate: 4 bytes of the request's
// JSON a token.
func estimateTokens(_ context.Context, r *model.Request) (int64, error) {
	b, err := json.Marshal(struct {
		M []model.Message `json:"messages"`
		S []model.Content `json:"system,omitempty"`
		T []model.ToolDef `json:"tools,omitempty"`
	}{r.Messages, r.System, r.Tools})
	if err != nil {
		return 0, fmt.Errorf("agentloop: context usage: encoding the request: %w", err)
	}
	return max(int64(len(b))/4, 1), nil
}
