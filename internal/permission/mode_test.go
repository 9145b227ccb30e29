package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// outcome is the part of a Decision the mode table compares.
type outcome struct {
	B      Behavior
	Reason string
}

func modeCalls(cwd string) map[string]Call {
	in := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	return map[string]Call{
		"Read":        {Tool: "Read", Input: in(map[string]any{"file_path": filepath.Join(cwd, "a.txt")}), ReadOnly: true},
		"Edit":        {Tool: "Edit", Input: in(map[string]any{"file_path": filepath.Join(cwd, "a.txt"), "old_string": "a", "new_string": "b"})},
		"Write":       {Tool: "Write", Input: in(map[string]any{"file_path": filepath.Join(cwd, "b.txt"), "content": "x"})},
		"BashRead":    {Tool: "Bash", Input: in(map[string]any{"command": "ls -la && cat a.txt | wc -l"})},
		"BashWrite":   {Tool: "Bash", Input: in(map[string]any{"command": "touch made.txt"})},
		"BashProgram": {Tool: "Bash", Input: in(map[string]any{"command": "npm test"})},
		"WebFetch":    {Tool: "WebFetch", Input: in(map[string]any{"url": "https://example.com/", "prompt": "p"}), ReadOnly: true},
		"MCP":         {Tool: "mcp__srv__do", Input: in(map[string]any{}), ReadOnly: true},
	}
}

func decideAll(t *testing.T, cfg Config) map[string]outcome {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]outcome{}
	for name, call := range modeCalls(cfg.Dirs[0]) {
		d := c.Decide(context.Background(), call)
		got[name] = outcome{d.Behavior, d.ReasonType}
	}
	return got
}

// allowAll is a classifier that approves everything it is asked about.
var allowAll = ClassifierFunc(func(context.Context, ClassifyRequest) (ClassifierResult, error) {
	return ClassifierResult{Behavior: Allow, Reason: "looks fine"}, nil
})

func TestModeTable(t *testing.T) {
	cwd := t.TempDir()
	allowR := outcome{Allow, ReasonRule}
	allowM := outcome{Allow, ReasonMode}
	allowS := outcome{Allow, ReasonSubcommands}
	allowC := outcome{Allow, ReasonClassifier}
	askM := outcome{Ask, ReasonMode}
	askS := outcome{Ask, ReasonSubcommands}
	denyM := outcome{Deny, ReasonMode}
	denyS := outcome{Deny, ReasonSubcommands}
	rules := RuleSet{Sources: []SourceRules{{Source: SourceCLI,
		Allow: []string{"Edit", "Bash(touch:*)", "Bash(npm test:*)", "WebFetch(domain:example.com)", "mcp__srv"}}}}

	tests := []struct {
		name string
		cfg  Config
		want map[string]outcome
	}{
		{"default", Config{Mode: ModeDefault}, map[string]outcome{
			"Read": allowM, "Edit": askM, "Write": askM, "BashRead": allowS, "BashWrite": askS, "BashProgram": askS,
			"WebFetch": askM, "MCP": askM}},
		{"acceptEdits", Config{Mode: ModeAcceptEdits}, map[string]outcome{
			"Read": allowM, "Edit": allowM, "Write": allowM, "BashRead": allowS, "BashWrite": allowM, "BashProgram": askS,
			"WebFetch": askM, "MCP": askM}},
		{"plan", Config{Mode: ModePlan}, map[string]outcome{
			"Read": allowM, "Edit": askM, "Write": askM, "BashRead": allowS, "BashWrite": askM, "BashProgram": askM,
			"WebFetch": askM, "MCP": askM}},
		{"dontAsk", Config{Mode: ModeDontAsk}, map[string]outcome{
			"Read": allowM, "Edit": denyM, "Write": denyM, "BashRead": allowS, "BashWrite": denyS, "BashProgram": denyS,
			"WebFetch": denyM, "MCP": denyM}},
		{"bypassPermissions", Config{Mode: ModeBypass}, map[string]outcome{
			"Read": allowM, "Edit": allowM, "Write": allowM, "BashRead": allowM, "BashWrite": allowM, "BashProgram": allowM,
			"WebFetch": allowM, "MCP": allowM}},
		{"auto without classifier", Config{Mode: ModeAuto}, map[string]outcome{
			"Read": allowM, "Edit": askM, "Write": askM, "BashRead": allowS, "BashWrite": askS, "BashProgram": askS,
			"WebFetch": askM, "MCP": askM}},
		{"auto with classifier", Config{Mode: ModeAuto, Classifier: allowAll}, map[string]outcome{
			"Read": allowM, "Edit": allowC, "Write": allowC, "BashRead": allowS, "BashWrite": allowC, "BashProgram": allowC,
			"WebFetch": allowC, "MCP": allowC}},
		{"default with allow rules", Config{Mode: ModeDefault, Rules: rules}, map[string]outcome{
			"Read": allowM, "Edit": allowR, "Write": allowR, "BashRead": allowS, "BashWrite": allowR, "BashProgram": allowR,
			"WebFetch": allowR, "MCP": allowR}},
		{"plan with allow rules", Config{Mode: ModePlan, Rules: rules}, map[string]outcome{
			"Read": allowM, "Edit": askM, "Write": askM, "BashRead": allowS, "BashWrite": askM, "BashProgram": askM,
			"WebFetch": allowR, "MCP": allowR}},
		{"dontAsk with allow rules", Config{Mode: ModeDontAsk, Rules: rules}, map[string]outcome{
			"Read": allowM, "Edit": allowR, "Write": allowR, "BashRead": allowS, "BashWrite": allowR, "BashProgram": allowR,
			"WebFetch": allowR, "MCP": allowR}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Dirs = []string{cwd}
			if diff := cmp.Diff(tt.want, decideAll(t, tt.cfg)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOrder checks the evaluation order: deny rules, then ask rules, then
// the mode, then allow rules.
func TestOrder(t *testing.T) {
	cwd := t.TempDir()
	bash := func(cmd string) Call {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return Call{Tool: "Bash", Input: b}
	}
	tests := []struct {
		name             string
		mode             Mode
		allow, deny, ask []string
		call             Call
		want             outcome
	}{
		{"deny beats allow", ModeDefault, []string{"Bash"}, []string{"Bash(npm publish:*)"}, nil, bash("npm publish"), outcome{Deny, ReasonRule}},
		{"deny beats ask", ModeDefault, nil, []string{"Bash(npm:*)"}, []string{"Bash(npm:*)"}, bash("npm x"), outcome{Deny, ReasonRule}},
		{"deny beats bypass", ModeBypass, nil, []string{"Bash(npm:*)"}, nil, bash("npm x"), outcome{Deny, ReasonRule}},
		{"ask beats allow", ModeDefault, []string{"Bash"}, nil, []string{"Bash(npm:*)"}, bash("npm x"), outcome{Ask, ReasonRule}},
		{"ask beats bypass", ModeBypass, nil, nil, []string{"Bash(npm:*)"}, bash("npm x"), outcome{Ask, ReasonRule}},
		{"ask rule denied in dontAsk", ModeDontAsk, []string{"Bash"}, nil, []string{"Bash(npm:*)"}, bash("npm x"), outcome{Deny, ReasonRule}},
		{"bypass before allow", ModeBypass, []string{"Bash(npm:*)"}, nil, nil, bash("npm x"), outcome{Allow, ReasonMode}},
		{"any part denied denies all", ModeDefault, []string{"Bash"}, []string{"Bash(rm:*)"}, nil, bash("ls && rm x"), outcome{Deny, ReasonRule}},
		{"every part must be allowed", ModeDefault, []string{"Bash(npm test:*)"}, nil, nil, bash("npm test && npm publish"), outcome{Ask, ReasonSubcommands}},
		{"ask rule on a part", ModeDefault, []string{"Bash"}, nil, []string{"Bash(git push:*)"}, bash("git add . && git push"), outcome{Ask, ReasonRule}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs RuleSet
			for _, r := range tt.allow {
				_ = rs.Add(SourceCLI, Allow, MustParseRule(r))
			}
			for _, r := range tt.deny {
				_ = rs.Add(SourceCLI, Deny, MustParseRule(r))
			}
			for _, r := range tt.ask {
				_ = rs.Add(SourceCLI, Ask, MustParseRule(r))
			}
			c, err := New(Config{Mode: tt.mode, Rules: rs, Dirs: []string{cwd}})
			if err != nil {
				t.Fatal(err)
			}
			d := c.Decide(context.Background(), tt.call)
			if diff := cmp.Diff(tt.want, outcome{d.Behavior, d.ReasonType}); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, d.Message)
			}
		})
	}
}
