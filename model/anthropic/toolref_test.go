package anthropic

import (
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestToolReferences: Anthropic's own API (its address, or a loopback
// gateway) takes tool_reference blocks; another gateway and the cloud
// platforms get the text form.
func TestToolReferences(t *testing.T) {
	clearPlatformEnv(t)
	t.Setenv("ANTHROPIC_BASE_URL", "")
	for _, c := range []struct {
		name string
		o    Options
		want bool
	}{
		{"default address", Options{APIKey: "k"}, true},
		{"anthropic.com", Options{APIKey: "k", BaseURL: "https://api.anthropic.com"}, true},
		{"loopback", Options{APIKey: "k", BaseURL: "http://127.0.0.1:8080"}, true},
		{"other gateway", Options{APIKey: "k", BaseURL: "https://llm.example.com/anthropic"}, false},
		{"bedrock", Options{Platform: PlatformBedrock, SkipPlatformAuth: true, AWSRegion: "us-west-2"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(&c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.ToolReferences(); got != c.want {
				t.Errorf("ToolReferences() = %v, want %v", got, c.want)
			}
		})
	}
}

// TestSameContentsToolName: the message cache tells apart two results
// that differ only in the tool a tool_reference names, so a request never
// carries a stale encoding of one.
func TestSameContentsToolName(t *testing.T) {
	a := []model.Content{{Type: model.TypeToolResult, ToolUseID: "t", Blocks: []model.Content{model.ToolReference("a")}}}
	b := []model.Content{{Type: model.TypeToolResult, ToolUseID: "t", Blocks: []model.Content{model.ToolReference("b")}}}
	if sameContents(a, b) {
		t.Error("sameContents says results referencing a and b are the same")
	}
	if !sameContents(a, deepCopy(a)) {
		t.Error("sameContents says a result differs from its copy")
	}
}
