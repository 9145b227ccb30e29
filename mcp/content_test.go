package mcp

import (
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConvertResult: how each kind of MCP content reaches the model.
func TestConvertResult(t *testing.T) {
	img := model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AQI="}}
	for _, tc := range []struct {
		name string
		in   *sdk.CallToolResult
		want tool.Result
	}{
		{"text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
			tool.Result{Content: []model.Content{model.TextBlock("a"), model.TextBlock("b")}}},
		{"is error", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "bad"}}},
			tool.Result{IsError: true, Content: []model.Content{model.TextBlock("bad")}}},
		{"empty", &sdk.CallToolResult{}, tool.Result{Content: []model.Content{model.TextBlock("")}}},
		{"image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}}}},
			tool.Result{Content: []model.Content{img}, ListContent: true}},
		{"structured replaces text, keeps images",
			&sdk.CallToolResult{StructuredContent: map[string]any{"n": 1},
				Content: []sdk.Content{&sdk.TextContent{Text: `{"n":1}`}, &sdk.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}}}},
			tool.Result{Content: []model.Content{model.TextBlock(`{"n":1}`), img}, Structured: map[string]any{"n": 1}, ListContent: true}},
		{"structured keeps resource blocks, drops text",
			&sdk.CallToolResult{StructuredContent: map[string]any{"ok": true},
				Content: []sdk.Content{&sdk.TextContent{Text: "ok"}, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a", Text: "body"}},
					&sdk.ResourceLink{URI: "file:///b"}}},
			tool.Result{Content: []model.Content{model.TextBlock(`{"ok":true}`), model.TextBlock("body"), model.TextBlock("[resource link: file:///b]")},
				Structured: map[string]any{"ok": true}}},
		{"embedded text resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{
			Resource: &sdk.ResourceContents{URI: "file:///a", Text: "body"}}}},
			tool.Result{Content: []model.Content{model.TextBlock("body")}}},
		{"embedded image resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{
			Resource: &sdk.ResourceContents{URI: "file:///a.png", MIMEType: "image/png", Blob: []byte{1, 2}}}}},
			tool.Result{Content: []model.Content{img}, ListContent: true}},
		{"embedded binary resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{
			Resource: &sdk.ResourceContents{URI: "file:///a.bin", MIMEType: "application/zip", Blob: []byte{1, 2}}}}},
			tool.Result{Content: []model.Content{model.TextBlock("[binary resource file:///a.bin (application/zip, 2 bytes)]")}}},
		{"resource link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///b", Name: "b", Description: "the b"}}},
			tool.Result{Content: []model.Content{model.TextBlock("[resource link: file:///b (b): the b]")}}},
		{"audio", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte{1}}}},
			tool.Result{Content: []model.Content{model.TextBlock("[audio content (audio/wav, 1 bytes) is not supported]")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every result goes to the model as a list of blocks; without
			// structured content the blocks are the call's output too.
			tc.want.ListContent = true
			if tc.want.Structured == nil {
				tc.want.Structured = tc.want.Content
			}
			if diff := cmp.Diff(tc.want, convertResult(tc.in)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestFullName: server and tool names are normalized as the reference
// does.
func TestFullName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"github", "get_issue", "mcp__github__get_issue"},
		{"my.server", "do it", "mcp__my_server__do_it"},
		{"a-b", "c-d", "mcp__a-b__c-d"},
	} {
		if got := FullName(tc.server, tc.tool); got != tc.want {
			t.Errorf("FullName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
}
