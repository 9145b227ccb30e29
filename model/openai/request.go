package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// The Chat Completions request body, as far as this package writes it. The
// field order is the wire order, so golden bodies stay stable.
type (
	chatRequest struct {
		Model               string         `json:"model"`
		Messages            []chatMessage  `json:"messages"`
		Tools               []chatTool     `json:"tools,omitempty"`
		MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
		MaxTokens           int            `json:"max_tokens,omitempty"`
		ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
		Stream              bool           `json:"stream"`
		StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	// chatMessage is one message. Content is a string, a list of parts,
	// or absent (an assistant message with only tool calls).
	chatMessage struct {
		Role       string     `json:"role"`
		Content    any        `json:"content,omitempty"`
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	contentPart struct {
		Type     string    `json:"type"`
		Text     string    `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
		File     *filePart `json:"file,omitempty"`
	}
	imageURL struct {
		URL string `json:"url"`
	}
	filePart struct {
		Filename string `json:"filename,omitempty"`
		FileData string `json:"file_data"`
	}
	toolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function toolFunction `json:"function"`
	}
	toolFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string      `json:"type"`
		Function functionDef `json:"function"`
	}
	functionDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// ToolErrorPrefix starts the content of a tool message whose tool_result
// block had is_error set: Chat Completions has no error flag for tool
// results, so the model learns of the failure from the text.
const ToolErrorPrefix = "[tool error] "

// emptySchema is sent for a tool without an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// translate builds the Chat Completions body of req for the model name
// modelName. It never fails on content it cannot express: such blocks
// (thinking, server tools, unknown types) are dropped, since the model
// cannot use them anyway.
func (p *Provider) translate(req *model.Request, modelName string) *chatRequest {
	out := &chatRequest{
		Model:         modelName,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	if req.MaxTokens > 0 {
		if p.legacyMaxTokens {
			out.MaxTokens = req.MaxTokens
		} else {
			out.MaxCompletionTokens = req.MaxTokens
		}
	}
	if !p.noReasoningEffort && req.Output != nil {
		out.ReasoningEffort = reasoningEffort(req.Output.Effort)
	}
	if sys := systemText(req.System); sys != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: sys})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			if am, ok := assistantMessage(m.Content); ok {
				out.Messages = append(out.Messages, am)
			}
		default:
			out.Messages = append(out.Messages, userMessages(m.Content)...)
		}
	}
	for _, t := range req.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool of the Messages API: nothing to run it here
		}
		params := t.InputSchema
		if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
			params = emptySchema
		}
		out.Tools = append(out.Tools, chatTool{
			Type:     "function",
			Function: functionDef{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return out
}

// reasoningEffort maps agentloop's effort levels to reasoning_effort values.
// An unknown level is sent as it is: the server judges it.
func reasoningEffort(effort string) string {
	switch effort {
	case "max":
		return "xhigh"
	}
	return effort
}

// systemText joins the text of the system blocks.
func systemText(blocks []model.Content) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == model.TypeText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// assistantMessage translates an assistant turn: text becomes the content,
// tool_use blocks tool_calls in order, ids kept. It reports false when
// nothing is left (a turn of thinking only).
func assistantMessage(blocks []model.Content) (chatMessage, bool) {
	m := chatMessage{Role: "assistant"}
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case model.TypeText:
			if b.Text != "" {
				text = append(text, b.Text)
			}
		case model.TypeToolUse:
			args := string(bytes.TrimSpace(b.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			m.ToolCalls = append(m.ToolCalls, toolCall{
				ID: b.ID, Type: "function",
				Function: toolFunction{Name: b.Name, Arguments: args},
			})
		}
	}
	if len(text) > 0 {
		m.Content = strings.Join(text, "\n\n")
	}
	return m, len(text) > 0 || len(m.ToolCalls) > 0
}

// userMessages translates a user turn. Its tool_result blocks become "tool"
// messages first, in order (they must follow the assistant's tool calls
// directly); the rest, with any images the results carried, becomes one
// user message after them.
func userMessages(blocks []model.Content) []chatMessage {
	var out []chatMessage
	var parts []contentPart
	for _, b := range blocks {
		switch b.Type {
		case model.TypeToolResult:
			text, images := toolResult(b)
			out = append(out, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: text})
			if len(images) > 0 {
				parts = append(parts, contentPart{Type: "text", Text: fmt.Sprintf("Images returned by tool call %s:", b.ToolUseID)})
				parts = append(parts, images...)
			}
		default:
			if p, ok := userPart(b); ok {
				parts = append(parts, p)
			}
		}
	}
	if len(parts) > 0 {
		out = append(out, chatMessage{Role: "user", Content: partsContent(parts)})
	}
	return out
}

// partsContent returns parts as a plain string when they are all text (the
// form every compatible server accepts), else as the list.
func partsContent(parts []contentPart) any {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type != "text" {
			return parts
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n\n")
}

// toolResult returns the text of a tool_result block, marked when it is an
// error, and its images as parts.
func toolResult(b model.Content) (string, []contentPart) {
	var texts []string
	var images []contentPart
	if b.Blocks == nil {
		texts = append(texts, b.Text)
	}
	for _, c := range b.Blocks {
		switch c.Type {
		case model.TypeText:
			texts = append(texts, c.Text)
		case model.TypeToolReference:
			// A ToolSearch result made for an API that loads deferred
			// tools itself (a session resumed on this provider): the
			// session declares the tool in full, so a line saying it is
			// loaded is all the model needs.
			texts = append(texts, "Loaded tool: "+c.ToolName)
		default:
			if p, ok := userPart(c); ok {
				images = append(images, p)
			}
		}
	}
	text := strings.Join(texts, "\n")
	if b.IsError != nil && *b.IsError {
		text = ToolErrorPrefix + text
	}
	return text, images
}

// userPart translates a text, image or document block of a user turn.
func userPart(b model.Content) (contentPart, bool) {
	switch b.Type {
	case model.TypeText:
		if b.Text == "" {
			return contentPart{}, false
		}
		return contentPart{Type: "text", Text: b.Text}, true
	case model.TypeImage:
		if u := sourceURL(b.Source); u != "" {
			return contentPart{Type: "image_url", ImageURL: &imageURL{URL: u}}, true
		}
	case model.TypeDocument:
		s := b.Source
		switch {
		case s == nil:
		case s.Type == "text":
			return contentPart{Type: "text", Text: s.Data}, true
		case s.Type == "base64":
			return contentPart{Type: "file", File: &filePart{Filename: "document.pdf", FileData: sourceURL(s)}}, true
		case s.Type == "url" && s.URL != "":
			return contentPart{Type: "text", Text: "Document: " + s.URL}, true
		}
	}
	return contentPart{}, false
}

// sourceURL returns a data URL for a base64 source, the URL of a url
// source, else "".
func sourceURL(s *model.Source) string {
	switch {
	case s == nil:
		return ""
	case s.Type == "base64" && s.Data != "":
		mt := s.MediaType
		if mt == "" {
			mt = "application/octet-stream"
		}
		return "data:" + mt + ";base64," + s.Data
	case s.Type == "url":
		return s.URL
	}
	return ""
}
