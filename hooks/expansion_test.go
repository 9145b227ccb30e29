package hooks

import (
	"context"
	"testing"
	"time"

	"github.com/agentloop/agentloop/settings"
)

// UserPromptExpansion matchers match the command name; settings hooks of
// the event load without a warning.
func TestUserPromptExpansionMatcherAndSettings(t *testing.T) {
	var ran []string
	cb := func(name string) Callback {
		return func(ctx context.Context, in Input, _ string) (Output, error) {
			ran = append(ran, name)
			return Output{}, nil
		}
	}
	d, err := New(Config{
		Callbacks: map[Event][]Matcher{UserPromptExpansion: {
			{Matcher: "deploy", Hooks: []Callback{cb("deploy")}},
			{Matcher: "^front.*", Hooks: []Callback{cb("front")}},
		}},
		Commands: map[string][]settings.HookMatcher{"UserPromptExpansion": {{Matcher: "x",
			Hooks: []settings.Hook{{Type: "command", Command: "true"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := d.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	d.UserPromptExpansion(context.Background(), UserPromptExpansionInput{ExpansionType: "slash_command", CommandName: "frontend:lint"})
	if len(ran) != 1 || ran[0] != "front" {
		t.Errorf("ran %v, want [front]", ran)
	}
	if !d.Matches(UserPromptExpansion, "deploy") || d.Matches(UserPromptExpansion, "other") {
		t.Error("Matches does not follow the command name")
	}
}

// A UserPromptExpansion hook that times out blocks the command.
func TestUserPromptExpansionTimeoutBlocks(t *testing.T) {
	d, err := New(Config{Callbacks: map[Event][]Matcher{UserPromptExpansion: {{Timeout: 20 * time.Millisecond,
		Hooks: []Callback{func(ctx context.Context, in Input, _ string) (Output, error) {
			<-ctx.Done()
			return Output{}, ctx.Err()
		}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.UserPromptExpansion(context.Background(), UserPromptExpansionInput{CommandName: "x"})
	if !r.Blocked || r.Reason == "" {
		t.Errorf("result %+v", r)
	}
}
