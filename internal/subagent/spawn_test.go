package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// testSpawner is a Spawner whose Engine records the Child it is asked for
// and fails, so nothing runs: these tests pin what the Spawner decides.
func testSpawner(t *testing.T, defs map[string]Definition, asked *[]Child) *Spawner {
	t.Helper()
	env := &tool.Env{SessionID: "s1", Cwd: t.TempDir(), State: &tool.State{}}
	d, err := hooks.New(hooks.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &Spawner{
		Env:       env,
		Lineage:   lineage.New(lineage.Config{DisallowedTools: []string{"WebFetch"}}),
		Hooks:     d,
		HookBase:  func(lineage.Agent) hooks.Base { return hooks.Base{} },
		Agents:    func() map[string]Definition { return Definitions(defs) },
		SetMode:   func(lineage.Agent, lineage.Agent, vocab.PermissionMode) {},
		StopHooks: func(lineage.Agent, func() string, *bool) engine.HookPoints { return engine.HookPoints{} },
		Engine: func(c Child) (*engine.Session, error) {
			*asked = append(*asked, c)
			return nil, errors.New("no engine in this test")
		},
		Follow: func(*engine.Session, lineage.Agent, lineage.Agent, Definition) func() { return func() {} },
		Note:   func(string) {},
	}
}

func TestDefinitions(t *testing.T) {
	if got := Definitions(); len(got) != 1 || got[GeneralPurpose].Prompt == "" {
		t.Errorf("Definitions() = %v, want general-purpose alone", got)
	}
	files := map[string]Definition{"reviewer": {Description: "from a file"}, GeneralPurpose: {Description: "mine"}}
	opts := map[string]Definition{"reviewer": {Description: "from options"}}
	got := Definitions(files, opts)
	want := map[string]Definition{"reviewer": {Description: "from options"}, GeneralPurpose: {Description: "mine"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("later layers win (-want +got):\n%s", d)
	}
}

// TestSpawnerChild pins what a child gets: the call's model and effort
// over its definition's, tools no wider than its parent's or the tree's
// rules, and no Agent tool at the bottom layer.
func TestSpawnerChild(t *testing.T) {
	defs := map[string]Definition{
		"narrow":  {Description: "d", Tools: []string{"Read", "Agent", "WebFetch"}, Model: "haiku", Effort: "low"},
		"inherit": {Description: "d", Model: "inherit"},
	}
	parentTools := []string{"Read", "Grep", "Agent", "WebFetch"}
	tests := []struct {
		name  string
		in    call
		depth int // the parent's
		want  Child
	}{
		{"definition's model and effort", call{SubagentType: "narrow"}, 0,
			Child{Model: pricing.Resolve("haiku"), Effort: "low", Tools: []string{"Read", "Agent"}}},
		{"call's model and effort win", call{SubagentType: "narrow", Model: "opus", Effort: "high"}, 0,
			Child{Model: pricing.Resolve("opus"), Effort: "high", Tools: []string{"Read", "Agent"}}},
		{"inherit keeps the parent's model", call{SubagentType: "inherit"}, 0,
			Child{Tools: []string{"Read", "Grep", "Agent"}}},
		{"no Agent at the bottom layer", call{SubagentType: "inherit"}, MaxDepth - 1,
			Child{Tools: []string{"Read", "Grep"}}},
		{"the built-in agent", call{}, 0, Child{Tools: []string{"Read", "Grep", "Agent"}, BuiltIn: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []Child
			sp := testSpawner(t, defs, &asked)
			parent := lineage.Agent{ID: "p", Depth: tc.depth, MaxTurns: 7}
			res, err := sp.Tool(parent, func() []string { return parentTools }).Run(context.Background(),
				&tool.Call{ID: "toolu_1", Input: mustJSON(t, map[string]any{"description": "x", "prompt": "go", "subagent_type": tc.in.SubagentType,
					"model": tc.in.Model, "effort": tc.in.Effort})})
			if err == nil || !strings.Contains(err.Error(), "no engine in this test") {
				t.Fatalf("Run = %+v, %v; want the Engine's error", res, err)
			}
			if len(asked) != 1 {
				t.Fatalf("Engine asked %d times, want 1", len(asked))
			}
			got := asked[0]
			if got.Agent.Depth != tc.depth+1 || got.Agent.MaxTurns != 7 || got.ParentToolUseID != "toolu_1" || got.Cwd != sp.Env.Cwd ||
				got.ParentAgentID != "p" {
				t.Errorf("child identity = %+v, parent call %q, parent agent %q, cwd %q", got.Agent, got.ParentToolUseID, got.ParentAgentID, got.Cwd)
			}
			if (got.AgentTool != nil) != (len(tc.want.Tools) > 0 && tc.want.Tools[len(tc.want.Tools)-1] == "Agent") {
				t.Errorf("AgentTool = %v with tools %v", got.AgentTool, got.Tools)
			}
			got.Def, got.Agent, got.ParentToolUseID, got.ParentAgentID, got.Cwd, got.Hooks, got.AgentTool = Definition{}, lineage.Agent{}, "", "", "", engine.HookPoints{}, nil
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("child (-want +got):\n%s", d)
			}
		})
	}
}

// TestSpawnerRefuses pins the calls that start nothing and tell the model
// why.
func TestSpawnerRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"unknown type", map[string]any{"subagent_type": "nobody"}, `Agent type "nobody" not found. Available agents: general-purpose`},
		{"remote isolation", map[string]any{"isolation": "remote"}, `isolation "remote" is not supported`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []Child
			sp := testSpawner(t, nil, &asked)
			in := map[string]any{"description": "x", "prompt": "go"}
			for k, v := range tc.in {
				in[k] = v
			}
			res, err := sp.Tool(lineage.Agent{}, func() []string { return []string{"Read"} }).Run(context.Background(),
				&tool.Call{ID: "toolu_1", Input: mustJSON(t, in)})
			if err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, tc.want) {
				t.Errorf("Run = %+v, %v; want an is_error result saying %q", res, err, tc.want)
			}
			if len(asked) != 0 {
				t.Errorf("a child was built: %+v", asked)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
