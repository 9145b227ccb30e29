package acp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type shoutIn struct {
	Text string `json:"text"`
}

// TestEditorMCPServer: an http MCP server the editor names in
// session/new is connected with its headers, and its tool's result comes
// back to the editor.
func TestEditorMCPServer(t *testing.T) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "editor-tools", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "shout", Description: "Upper-cases text",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, in shoutIn) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "SHOUTED " + in.Text}}}, nil, nil
		})
	var (
		mu        sync.Mutex
		gotHeader string
	)
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotHeader = r.Header.Get("X-Editor")
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the sessions close (cleanups run last first)

	api := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__editor-tools__shout", map[string]any{"text": "hi"}),
		agentlooptest.Text("done"))
	r := start(t, api, t.TempDir(), t.TempDir())
	s := r.newSession(sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: "editor-tools", Type: "http", Url: ts.URL,
		Headers: []sdk.HttpHeader{{Name: "X-Editor", Value: "yes"}}}})
	if _, err := r.prompt(context.Background(), s.SessionId, "shout"); err != nil {
		t.Fatal(err)
	}
	want := []string{"tool_call other editor-tools: shout", "tool_call_update completed: SHOUTED hi", "text: done"}
	if d := cmp.Diff(want, summary(r.ed.take())); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotHeader != "yes" {
		t.Errorf("X-Editor header = %q", gotHeader)
	}
}
