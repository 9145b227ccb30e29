package agentlooptest_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// TestProviderIgnoresEnvironment: Server.Provider talks to the server with
// its own key whatever the environment says (another key, a cloud
// provider, custom headers).
func TestProviderIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-real-key")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("CLAUDE_CODE_USE_BEDROCK", "1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
	srv := agentlooptest.NewTB(t, agentlooptest.Text("scripted"))
	resp, err := srv.Provider().Stream(context.Background(), &model.Request{
		Model: "claude-opus-5-5", MaxTokens: 100,
		Messages: []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("hi")}}},
	}, nil)
	if err != nil || resp.Text() != "scripted" {
		t.Fatalf("Stream: %v, %v", resp, err)
	}
	h := srv.Requests()[0].Header
	if h.Get("x-api-key") != "sk-test" || h.Get("X-From-Env") != "" {
		t.Errorf("headers %v: want x-api-key sk-test and nothing from the environment", h)
	}
}
