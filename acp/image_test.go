package acp_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestImagePrompt: the agent advertises image prompts, and a prompt of
// text, an image and more text reaches the model as those three blocks,
// the image with its base64 data and media type.
func TestImagePrompt(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("A red square."))
	r := start(t, srv, t.TempDir(), t.TempDir())
	ctx := context.Background()
	init, err := r.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.PromptCapabilities.Image {
		t.Error("promptCapabilities.image is not advertised")
	}
	s := r.newSession()
	const png = "iVBORw0KGgo="
	resp, err := r.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("What is in"), sdk.TextBlock("this picture?"), sdk.ImageBlock(png, "image/png"), sdk.TextBlock("Be brief."),
	}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", resp, err)
	}
	got := srv.LastRequest().LastUserMessage().Content
	want := []model.Content{
		model.TextBlock("What is in\nthis picture?"),
		{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: png}},
		model.TextBlock("Be brief."),
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(model.Content{}, "CacheControl")); d != "" {
		t.Errorf("the prompt's blocks (-want +got):\n%s", d)
	}
}
