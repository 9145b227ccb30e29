package model

import (
	"encoding/json"
	"fmt"
)

// Content block types.
const (
	TypeText             = "text"
	TypeThinking         = "thinking"
	TypeRedactedThinking = "redacted_thinking"
	TypeToolUse          = "tool_use"
	TypeToolResult       = "tool_result"
	TypeImage            = "image"
	TypeDocument         = "document"
	TypeServerToolUse    = "server_tool_use"
	TypeWebSearchResult  = "web_search_tool_result"
	// TypeToolReference is a block inside a tool_result that names a tool
	// declared with defer_loading: the API then loads that tool's
	// definition for the model (the tool search beta, [ToolSearchBeta]).
	TypeToolReference = "tool_reference"
)

// ToolSearchBeta is the anthropic-beta value under which the API accepts
// tools declared with defer_loading and tool_reference blocks.
const ToolSearchBeta = "advanced-tool-use-2025-11-20"

// Content is one content block of a message, of any type. Only the fields of
// its Type are meaningful. Blocks of types this package does not know keep
// their JSON in Raw and are sent back verbatim.
type Content struct {
	Type string `json:"type"`

	// text
	Text string `json:"text,omitempty"`

	// thinking, redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`

	// tool_use, server_tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// tool_result: the content is a string (Text) unless Blocks is set.
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Blocks    []Content `json:"-"`
	IsError   *bool     `json:"is_error,omitempty"`

	// image, document
	Source *Source `json:"source,omitempty"`

	// tool_reference: the name of the deferred tool to load.
	ToolName string `json:"tool_name,omitempty"`

	CacheControl *CacheControl `json:"cache_control,omitempty"`

	// Raw is the block's JSON when it came from the API or a transcript and
	// its type is not one modelled here; in a sealed tool_result ([Seal]),
	// the block's JSON, sent in place of its text.
	Raw json.RawMessage `json:"-"`
}

// Source is the source of an image or document block.
type Source struct {
	Type      string `json:"type"` // base64, url, text
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Content { return Content{Type: TypeText, Text: s} }

// known reports whether Content models blocks of type typ field by field.
func known(typ string) bool {
	switch typ {
	case TypeText, TypeThinking, TypeRedactedThinking, TypeToolUse, TypeToolResult, TypeImage,
		TypeDocument, TypeServerToolUse, TypeToolReference:
		return true
	}
	return false
}

// ToolReference returns a tool_reference block naming the tool name.
func ToolReference(name string) Content { return Content{Type: TypeToolReference, ToolName: name} }

// MarshalJSON writes the block in the API's wire format. Text and thinking
// fields are always written for their types, even when empty, since the API
// requires them. It is [Content.AppendJSON] into a new slice.
func (c Content) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil) }

// UnmarshalJSON reads a block in the API's wire format.
func (c *Content) UnmarshalJSON(b []byte) error {
	if c.decodeQuick(b) {
		return nil
	}
	return c.unmarshalPlain(b)
}

// unmarshalPlain is UnmarshalJSON through encoding/json, for every block
// decodeQuick leaves alone; its answer is the definition decodeQuick
// follows (FuzzContentDecodeQuick).
func (c *Content) unmarshalPlain(b []byte) error {
	type plain Content
	var p struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	*c = Content(p.plain)
	if c.Type == "" {
		return fmt.Errorf("content block: missing type")
	}
	if !known(c.Type) {
		c.Raw = append(json.RawMessage(nil), b...)
	}
	if c.Type == TypeToolResult && len(p.Content) > 0 {
		switch p.Content[0] {
		case '"':
			if err := json.Unmarshal(p.Content, &c.Text); err != nil {
				return fmt.Errorf("tool_result content: %w", err)
			}
		case '[':
			if err := json.Unmarshal(p.Content, &c.Blocks); err != nil {
				return fmt.Errorf("tool_result content: %w", err)
			}
			if c.Blocks == nil {
				c.Blocks = []Content{}
			}
		case 'n':
		default:
			return fmt.Errorf("tool_result content: want a string or a list, got %.20s", p.Content)
		}
	}
	return nil
}

// ResultText returns a tool_result's content as text: the string content, or
// its text blocks joined by newlines; a sealed result's text is read back
// from its JSON.
func (c Content) ResultText() string {
	if c.Sealed() {
		if u, err := Unseal(c); err == nil {
			return u.Text
		}
		return ""
	}
	if c.Blocks == nil {
		return c.Text
	}
	s := ""
	for i, b := range c.Blocks {
		if b.Type != TypeText {
			continue
		}
		if i > 0 {
			s += "\n"
		}
		s += b.Text
	}
	return s
}
