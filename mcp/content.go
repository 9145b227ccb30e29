package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// convertResult maps a CallToolResult to the tool result the model sees:
// text blocks as text, images as image blocks, embedded resources as their
// text, links and other blocks as a one-line description, always as a list
// of blocks. With structured content the model gets its JSON in place of
// the text blocks and the output is the structured content; without, the
// output is the blocks.
func convertResult(res *sdk.CallToolResult) tool.Result {
	out := tool.Result{IsError: res.IsError}
	structured := res.StructuredContent != nil
	if structured {
		out.Structured = res.StructuredContent
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Content = append(out.Content, model.TextBlock(string(b)))
		}
	}
	for _, c := range res.Content {
		if _, isText := c.(*sdk.TextContent); isText && structured {
			continue
		}
		if b, ok := convertBlock(c); ok {
			out.Content = append(out.Content, b)
		}
	}
	if len(out.Content) == 0 {
		out.Content = []model.Content{model.TextBlock("")}
	}
	// As the reference does, the model gets the blocks as a list even
	// when there is one text block, and without structured content the
	// call's output (tool_use_result, a PostToolUse hook's tool_response)
	// is that list of blocks, not their text.
	out.ListContent = true
	if !structured {
		out.Structured = append([]model.Content(nil), out.Content...)
	}
	return out
}

// convertBlock maps one MCP content block.
func convertBlock(c sdk.Content) (model.Content, bool) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return model.TextBlock(c.Text), true
	case *sdk.ImageContent:
		return imageBlock(c.MIMEType, c.Data), true
	case *sdk.AudioContent:
		return model.TextBlock(fmt.Sprintf("[audio content (%s, %d bytes) is not supported]", c.MIMEType, len(c.Data))), true
	case *sdk.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return model.TextBlock(s + "]"), true
	case *sdk.EmbeddedResource:
		return resourceBlock(c.Resource), c.Resource != nil
	default:
		return model.Content{}, false
	}
}

// resourceBlock maps the contents of a resource: text as text, an image
// blob as an image, other blobs as a description.
func resourceBlock(r *sdk.ResourceContents) model.Content {
	switch {
	case r.Text != "" || r.Blob == nil:
		return model.TextBlock(r.Text)
	case strings.HasPrefix(r.MIMEType, "image/"):
		return imageBlock(r.MIMEType, r.Blob)
	default:
		return model.TextBlock(fmt.Sprintf("[binary resource %s (%s, %d bytes)]", r.URI, r.MIMEType, len(r.Blob)))
	}
}

func imageBlock(mime string, data []byte) model.Content {
	return model.Content{Type: model.TypeImage, Source: &model.Source{
		Type: "base64", MediaType: mime, Data: base64.StdEncoding.EncodeToString(data)}}
}
