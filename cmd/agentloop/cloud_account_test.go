package main

import (
	"testing"

	"github.com/agentloop/agentloop/model/anthropic"
)

// The initialize answer's account names the cloud platform the
// environment selects, and no Anthropic key source on it.
func TestAccountPlatformFromEnv(t *testing.T) {
	tests := []struct {
		name, bedrock, vertex, apiKey string
		provider, source              string
	}{
		{"first party", "", "", "sk-x", anthropic.PlatformAnthropic, "ANTHROPIC_API_KEY"},
		{"bedrock", "1", "", "sk-x", anthropic.PlatformBedrock, "none"},
		{"vertex", "", "true", "", anthropic.PlatformVertex, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_CODE_USE_BEDROCK", tt.bedrock)
			t.Setenv("CLAUDE_CODE_USE_VERTEX", tt.vertex)
			t.Setenv("ANTHROPIC_API_KEY", tt.apiKey)
			t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
			if got := anthropic.EnvPlatform(); got != tt.provider {
				t.Errorf("EnvPlatform() = %q, want %q", got, tt.provider)
			}
			if got := apiKeySource(); got != tt.source {
				t.Errorf("apiKeySource() = %q, want %q", got, tt.source)
			}
		})
	}
}
