package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

// TestCheck: Check refuses what New refuses, with New's error, and
// accepts what New accepts.
func TestCheck(t *testing.T) {
	echo := tool.New("echo", "Echo.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
		return tool.Text("x"), nil
	}, nil)
	env := &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}
	tests := []struct {
		name string
		cfg  Config
		bad  bool
	}{
		{name: "valid", cfg: Config{Provider: &scripted{}, Model: "m", Env: env, Tools: []tool.Tool{echo}}},
		{name: "no provider", cfg: Config{Model: "m", Env: env}, bad: true},
		{name: "no model", cfg: Config{Provider: &scripted{}, Env: env}, bad: true},
		{name: "two tools of one name", cfg: Config{Provider: &scripted{}, Model: "m", Env: env, Tools: []tool.Tool{echo, echo}}, bad: true},
		{name: "a bad output schema", cfg: Config{Provider: &scripted{}, Model: "m", Env: env, OutputSchema: json.RawMessage(`{"type": 7}`)}, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, newErr := New(tt.cfg)
			err := Check(tt.cfg)
			if (err != nil) != tt.bad {
				t.Fatalf("Check = %v, want an error: %v", err, tt.bad)
			}
			if err != nil && err.Error() != newErr.Error() {
				t.Errorf("Check = %v, New = %v", err, newErr)
			}
		})
	}
}
