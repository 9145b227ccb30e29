package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentloop/agentloop/model"
)

var _ model.TokenCounter = (*Provider)(nil)

// countRequest is the body of POST /v1/messages/count_tokens: the parts of
// a request that take up context.
type countRequest struct {
	Model             string                   `json:"model"`
	Messages          []model.Message          `json:"messages"`
	System            []model.Content          `json:"system,omitempty"`
	Tools             []model.ToolDef          `json:"tools,omitempty"`
	Thinking          *model.Thinking          `json:"thinking,omitempty"`
	ContextManagement *model.ContextManagement `json:"context_management,omitempty"`
}

// CountTokens implements [model.TokenCounter] with the API's count_tokens
// endpoint: it returns the input tokens of req's model, system prompt,
// tools and messages (req.Messages must not be empty; the API refuses an
// empty list). req.Betas go in the anthropic-beta header. It makes one
// attempt, bounded by ctx and the provider's request timeout; a failure is
// a [*model.APIError] for an API answer, else a wrapped error.
func (p *Provider) CountTokens(ctx context.Context, req *model.Request) (int64, error) {
	if req == nil {
		return 0, errors.New("anthropic: count tokens: nil request")
	}
	body, err := json.Marshal(countRequest{Model: req.Model, Messages: req.Messages, System: req.System,
		Tools: req.Tools, Thinking: req.Thinking, ContextManagement: req.ContextManagement})
	if err != nil {
		return 0, fmt.Errorf("anthropic: count tokens: encoding request: %w", err)
	}
	if p.timeouts.request > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeouts.request)
		defer cancel()
	}
	if p.platform == PlatformBedrock {
		return 0, errors.New("anthropic: count tokens: not served on Amazon Bedrock")
	}
	extra := http.Header{}
	query := ""
	if p.platform == PlatformAnthropic {
		query = "beta=true"
	}
	key, kf := p.helperKey(ctx)
	if kf != nil {
		return 0, kf.fatal
	}
	if key != "" {
		extra.Set("X-Api-Key", key)
	}
	if len(req.Betas) > 0 {
		extra.Set("anthropic-beta", strings.Join(req.Betas, ","))
	}
	var out struct {
		InputTokens *int64 `json:"input_tokens"`
	}
	res, err := p.client.post(ctx, "v1/messages/count_tokens", query, bytes.NewReader(body), int64(len(body)), nil, extra)
	if err != nil {
		var ae *statusError
		if errors.As(err, &ae) {
			e := statusFailure(ae).apiErr
			e.Endpoint = p.endpoint
			return 0, &e
		}
		return 0, fmt.Errorf("anthropic: count tokens: %w", err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil {
		return 0, fmt.Errorf("anthropic: count tokens: reading the answer: %w", err)
	}
	if out.InputTokens == nil {
		return 0, errors.New("anthropic: count tokens: the answer has no input_tokens")
	}
	return *out.InputTokens, nil
}
