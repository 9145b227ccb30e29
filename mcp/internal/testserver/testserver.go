// Package testserver is an MCP server for agentloop's tests: the same
// tools served over stdio (the stdio sub-directory's program), streamable
// HTTP or in-process.
package testserver

import (
	"context"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PNG is a 1×1 image that the image tool returns.
var PNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0}

// Hooks let a test see inside the server.
type Hooks struct {
	// Crash is called by the crash tool; nil means the tool fails instead.
	Crash func()
	// Cancelled, when set, receives a value when a slow call sees its
	// context cancelled (the client's notifications/cancelled).
	Cancelled chan<- struct{}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type slowIn struct {
	Ms int `json:"ms" jsonschema:"how long to take, in milliseconds"`
}

type empty struct{}

// New returns the test server named name with its tools: echo, fail,
// image, crash, slow, and a text resource test://readme.
func New(name string, h Hooks) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1.2.3"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo the text back",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Always fails"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "image", Description: "Returns an image and a caption"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a dot"},
				&sdk.ImageContent{MIMEType: "image/png", Data: PNG},
			}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Kills the server mid-call"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			if h.Crash == nil {
				return nil, nil, errors.New("crash is not wired")
			}
			h.Crash()
			// A process has exited by now; an HTTP server has dropped its
			// connections, and whatever this returns reaches nobody.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			return nil, nil, errors.New("crashed")
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow", Description: "Takes ms milliseconds"},
		func(ctx context.Context, _ *sdk.CallToolRequest, in slowIn) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
			case <-ctx.Done():
				if h.Cancelled != nil {
					h.Cancelled <- struct{}{}
				}
				return nil, nil, ctx.Err()
			}
		})
	srv.AddResource(&sdk.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain", Description: "The readme"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{
				{URI: "test://readme", MIMEType: "text/plain", Text: "read me first"}}}, nil
		})
	return srv
}
