package permission

import (
	"context"
	"encoding/json"
	"testing"
)

func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	mk := func(mode Mode, allow, deny []string) *Checker {
		var rs RuleSet
		for _, a := range allow {
			rs.Add(SourceCLI, Allow, MustParseRule(a))
		}
		for _, a := range deny {
			rs.Add(SourceCLI, Deny, MustParseRule(a))
		}
		c, err := New(Config{Mode: mode, Rules: rs, Dirs: []string{dir}, Home: "/home/u"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		mode  Mode
		allow []string
		deny  []string
		tool  string
		in    map[string]any
	}{
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "echo hi"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "touch made.txt"}},
		{ModeDefault, []string{"Bash"}, nil, "Bash", map[string]any{"command": "echo hi"}},
		{ModeDefault, []string{"Bash(git status:*)"}, nil, "Bash", map[string]any{"command": "git status; touch pwned"}},
		{ModeDefault, []string{"Bash(git status:*)"}, nil, "Bash", map[string]any{"command": "git status --short"}},
		{ModeDefault, []string{"Bash(git:*)"}, []string{"Bash(git push:*)"}, "Bash", map[string]any{"command": "git $X"}},
		{ModeDefault, nil, []string{"Bash(rm:*)"}, "Bash", map[string]any{"command": "'r'm -rf x"}},
		{ModeDefault, nil, []string{"Bash(rm:*)"}, "Bash", map[string]any{"command": "timeout 5 rm -rf x"}},
		{ModeDefault, nil, []string{"Bash(rm:*)"}, "Bash", map[string]any{"command": "sudo bash -c 'rm -rf x'"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "ls -la | grep foo && cat go.mod | wc -l"}},
		{ModeAcceptEdits, nil, nil, "Bash", map[string]any{"command": "mkdir -p out && touch out/x"}},
		{ModeAcceptEdits, nil, nil, "Bash", map[string]any{"command": "echo x > ../pwned"}},
		{ModeAcceptEdits, nil, nil, "Bash", map[string]any{"command": "rm -rf ."}},
		{ModeDefault, nil, nil, "Read", map[string]any{"file_path": dir + "/x"}},
		{ModeDefault, nil, nil, "Read", map[string]any{"file_path": "/etc/passwd"}},
		{ModeDefault, nil, nil, "Write", map[string]any{"file_path": dir + "/x"}},
		{ModeAcceptEdits, nil, nil, "Write", map[string]any{"file_path": dir + "/.git/config"}},
		{ModeDefault, nil, nil, "WebFetch", map[string]any{"url": "https://example.com/x"}},
		{ModeDefault, []string{"WebFetch(domain:example.com)"}, nil, "WebFetch", map[string]any{"url": "https://EXAMPLE.com./x"}},
		{ModeDefault, nil, nil, "mcp__srv__tool", map[string]any{}},
		{ModeDefault, []string{"mcp__srv"}, nil, "mcp__srv__tool", map[string]any{}},
		{ModeDontAsk, nil, nil, "Bash", map[string]any{"command": "npm test"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "find . -name '*.go' -exec rm {} \\;"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "for f in *.go; do echo \"$f\"; done"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "cd sub && ls"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "git log --oneline -5 && git diff HEAD~1 -- x.go"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "sed -n '1,10p' go.mod"}},
		{ModeDefault, nil, nil, "Bash", map[string]any{"command": "sed 's/a/b/w /tmp/x' go.mod"}},
		{ModeBypass, nil, nil, "Bash", map[string]any{"command": "rm -rf /"}},
		{ModeBypass, nil, nil, "Bash", map[string]any{"command": "rm -rf build"}},
	}
	for _, c := range cases {
		in, _ := json.Marshal(c.in)
		d := mk(c.mode, c.allow, c.deny).Decide(context.Background(), Call{Tool: c.tool, Input: in})
		t.Logf("%-12s %-30v %-8s %v -> %s %s rule=%s | %s | %v", c.mode, c.allow, c.tool, c.in, d.Behavior, d.ReasonType, d.Rule, d.Message, d.Suggestions)
	}
}
