package conversation

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// equalProvider is a model.Provider of a comparable value type, for
// the interface rule of sameConfig.
type equalProvider struct{ name string }

func (equalProvider) Stream(context.Context, *model.Request, model.Handler) (*model.Response, error) {
	return nil, nil
}

// funcProvider is a model.Provider whose values are not comparable.
type funcProvider func()

func (funcProvider) Stream(context.Context, *model.Request, model.Handler) (*model.Response, error) {
	return nil, nil
}

// TestSameConfig: two options are the same for sharing only when a
// session could not tell them apart: equal values, the same references.
func TestSameConfig(t *testing.T) {
	tools := []string{"Read", "Bash"}
	hk := map[hooks.Event][]hooks.Matcher{}
	ask := tool.AskUserFunc(nil)
	fn := funcProvider(func() {})
	base := Config{Model: "sonnet", Tools: tools, Hooks: hk, MaxTurns: 3, SettingSources: []settings.SettingSource{}}
	tests := []struct {
		name string
		edit func(c *Config)
		want bool
	}{
		{name: "a copy", edit: func(c *Config) {}, want: true},
		{name: "a string differs", edit: func(c *Config) { c.Model = "opus" }, want: false},
		{name: "a number differs", edit: func(c *Config) { c.MaxTurns = 4 }, want: false},
		{name: "an equal slice elsewhere", edit: func(c *Config) { c.Tools = []string{"Read", "Bash"} }, want: false},
		{name: "a shorter view of the same slice", edit: func(c *Config) { c.Tools = tools[:1] }, want: false},
		{name: "nil and empty slices", edit: func(c *Config) { c.SettingSources = nil }, want: false},
		{name: "another map", edit: func(c *Config) { c.Hooks = map[hooks.Event][]hooks.Matcher{} }, want: false},
		{name: "a pointer set", edit: func(c *Config) { c.Thinking = &ThinkingConfig{} }, want: false},
		{name: "a func left nil", edit: func(c *Config) { c.AskUser = ask }, want: true},
		{name: "a func set", edit: func(c *Config) {
			c.CanUseTool = func(context.Context, PermissionRequest) (PermissionResult, error) { return PermissionResult{}, nil }
		}, want: false},
		{name: "an interface set", edit: func(c *Config) { c.Provider = equalProvider{"a"} }, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base, base
			tt.edit(&b)
			if got := sameConfig(&a, &b); got != tt.want {
				t.Errorf("sameConfig = %v, want %v", got, tt.want)
			}
		})
	}
	ifaces := []struct {
		name string
		a, b model.Provider
		want bool
	}{
		{name: "equal values", a: equalProvider{"a"}, b: equalProvider{"a"}, want: true},
		{name: "unequal values", a: equalProvider{"a"}, b: equalProvider{"b"}, want: false},
		{name: "values that cannot be compared", a: fn, b: fn, want: false},
		{name: "different types", a: equalProvider{"a"}, b: fn, want: false},
	}
	for _, tt := range ifaces {
		t.Run("interface: "+tt.name, func(t *testing.T) {
			a, b := base, base
			a.Provider, b.Provider = tt.a, tt.b
			if got := sameConfig(&a, &b); got != tt.want {
				t.Errorf("sameConfig = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestShareConfig: a Config the same as the memo's gets the memo's; one
// that is not becomes the memo's.
func TestShareConfig(t *testing.T) {
	tools := []string{"Read"}
	a := &Config{Model: "sonnet", Tools: tools}
	if got := shareConfig(a); got != a {
		t.Fatal("the first Config was not kept")
	}
	b := &Config{Model: "sonnet", Tools: tools}
	if got := shareConfig(b); got != a {
		t.Error("the same options did not share the first Config")
	}
	c := &Config{Model: "opus", Tools: tools}
	if got := shareConfig(c); got != c {
		t.Error("other options were given a Config that is not theirs")
	}
	if got := shareConfig(&Config{Model: "opus", Tools: tools}); got != c {
		t.Error("the memo is not the latest Config")
	}
}
