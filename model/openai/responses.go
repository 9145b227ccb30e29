package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// The APIs a Provider can speak (Options.API).
const (
	// APIChatCompletions is POST /chat/completions, which every
	// compatible server serves. It is the default.
	APIChatCompletions = "chat"
	// APIResponses is OpenAI's POST /responses, with store set to false
	// so that nothing is kept on the server's side.
	APIResponses = "responses"
)

// wireBody is a request body of either API.
type wireBody interface {
	// dropEffort removes the reasoning effort, reporting whether there
	// was one.
	dropEffort() bool
}

func (r *chatRequest) dropEffort() bool {
	had := r.ReasoningEffort != ""
	r.ReasoningEffort = ""
	return had
}

// The Responses API request body, as far as this package writes it.
type (
	responsesRequest struct {
		Model           string          `json:"model"`
		Instructions    string          `json:"instructions,omitempty"`
		Input           []inputItem     `json:"input"`
		Tools           []responsesTool `json:"tools,omitempty"`
		MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
		Reasoning       *reasoningParam `json:"reasoning,omitempty"`
		Store           bool            `json:"store"`
		Stream          bool            `json:"stream"`
	}
	reasoningParam struct {
		Effort  string `json:"effort,omitempty"`
		Summary string `json:"summary,omitempty"`
	}
	// inputItem is a message (Role and Content) or a function call or
	// its output (Type, CallID and the rest).
	inputItem struct {
		Type      string `json:"type,omitempty"`
		Role      string `json:"role,omitempty"`
		Content   any    `json:"content,omitempty"`
		CallID    string `json:"call_id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
		Output    string `json:"output,omitempty"`
	}
	inputPart struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
		FileData string `json:"file_data,omitempty"`
		Filename string `json:"filename,omitempty"`
	}
	responsesTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
)

func (r *responsesRequest) dropEffort() bool {
	if r.Reasoning == nil || r.Reasoning.Effort == "" {
		return false
	}
	r.Reasoning = nil
	return true
}

// translateResponses builds the Responses API body of req, from the Chat
// Completions translation so that both APIs see the same conversation.
func (p *Provider) translateResponses(req *model.Request, modelName string) *responsesRequest {
	chat := p.translate(req, modelName)
	out := &responsesRequest{Model: modelName, MaxOutputTokens: req.MaxTokens, Stream: true}
	if chat.ReasoningEffort != "" {
		out.Reasoning = &reasoningParam{Effort: chat.ReasoningEffort, Summary: "auto"}
	}
	for _, m := range chat.Messages {
		switch m.Role {
		case "system":
			out.Instructions, _ = m.Content.(string)
		case "tool":
			text, _ := m.Content.(string)
			out.Input = append(out.Input, inputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: text})
		case "assistant":
			if text, _ := m.Content.(string); text != "" {
				out.Input = append(out.Input, inputItem{Role: "assistant", Content: text})
			}
			for _, tc := range m.ToolCalls {
				out.Input = append(out.Input, inputItem{Type: "function_call", CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
		default:
			out.Input = append(out.Input, inputItem{Role: m.Role, Content: responsesContent(m.Content)})
		}
	}
	for _, t := range chat.Tools {
		out.Tools = append(out.Tools, responsesTool{Type: "function", Name: t.Function.Name,
			Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out
}

// responsesContent converts a user message's content: a string stays one,
// parts become input parts.
func responsesContent(c any) any {
	parts, ok := c.([]contentPart)
	if !ok {
		return c
	}
	out := make([]inputPart, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, inputPart{Type: "input_text", Text: p.Text})
		case "image_url":
			out = append(out, inputPart{Type: "input_image", ImageURL: p.ImageURL.URL})
		case "file":
			out = append(out, inputPart{Type: "input_file", FileData: p.File.FileData, Filename: p.File.Filename})
		}
	}
	return out
}

// responsesEvent is one event of a Responses API stream, as far as it is
// read.
type responsesEvent struct {
	Type        string `json:"type"`
	OutputIndex *int   `json:"output_index"`
	Delta       string `json:"delta"`
	Arguments   string `json:"arguments"`
	Item        *struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Name   string `json:"name"`
	} `json:"item"`
	Response *struct {
		ID                string `json:"id"`
		Model             string `json:"model"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *errorPayload `json:"error"`
		Usage *struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			InputTokensDetails *struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
	// error events
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// handleResponses applies one event of a Responses API stream. It reports
// true when the event ends the reply.
func (s *streamState) handleResponses(name string, data []byte) (bool, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return false, nil
	}
	var ev responsesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, malformed("event %d: invalid JSON: %v: %s", s.n, err, truncate(string(data), 200))
	}
	if ev.Type == "" {
		ev.Type = name
	}
	r := ev.Response
	switch ev.Type {
	case "error":
		return false, &streamError{Type: "error", Message: ev.Message}
	case "response.failed":
		e := &streamError{Type: "error", Message: "the response failed"}
		if r != nil && r.Error != nil {
			e.Message = r.Error.Message
		}
		return false, e
	case "response.created", "response.in_progress":
		if r != nil {
			s.start(r.ID, r.Model)
		}
		return false, nil
	}
	s.start("", "")
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		s.text(ev.Delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		s.thinking(ev.Delta)
	case "response.output_item.added":
		if ev.Item != nil && ev.Item.Type == "function_call" {
			s.toolDelta(ev.OutputIndex, ev.Item.CallID, ev.Item.Name, "")
		}
	case "response.function_call_arguments.delta":
		if ev.OutputIndex == nil {
			return false, malformed("event %d: %s without output_index", s.n, ev.Type)
		}
		s.toolDelta(ev.OutputIndex, "", "", ev.Delta)
	case "response.function_call_arguments.done":
		// The whole arguments: used only by servers that sent no deltas.
		if i := ev.OutputIndex; i != nil && *i >= 0 && *i < len(s.calls) && s.calls[*i].args.Len() == 0 {
			s.calls[*i].args.WriteString(ev.Arguments)
		}
	case "response.completed", "response.incomplete":
		s.finished, s.finish = true, "stop"
		if r != nil {
			if r.IncompleteDetails != nil {
				switch r.IncompleteDetails.Reason {
				case "max_output_tokens":
					s.finish = "length"
				case "content_filter":
					s.finish = "content_filter"
				}
			}
			if u := r.Usage; u != nil {
				cu := chunkUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
				if u.InputTokensDetails != nil {
					cu.PromptTokensDetails = &struct {
						CachedTokens int64 `json:"cached_tokens"`
					}{u.InputTokensDetails.CachedTokens}
				}
				mu := cu.usage()
				s.usage = &mu
			}
		}
		return true, nil
	}
	return false, nil
}

// responsesPath and chatPath are the endpoints, relative to the base URL.
const (
	chatPath      = "chat/completions"
	responsesPath = "responses"
)

// checkAPI validates Options.API.
func checkAPI(api string) (string, error) {
	switch strings.ToLower(api) {
	case "", APIChatCompletions:
		return APIChatCompletions, nil
	case APIResponses:
		return APIResponses, nil
	}
	return "", fmt.Errorf("openai: API %q: want %q or %q", api, APIChatCompletions, APIResponses)
}
