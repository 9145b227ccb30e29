package anthropic

import "testing"

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
