package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpdateJSON(t *testing.T) {
	// The wire form of the reference's PermissionUpdate.
	raw := `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"},
		{"type":"setMode","mode":"acceptEdits","destination":"session"},
		{"type":"addDirectories","directories":["/extra"],"destination":"session"},
		{"type":"removeRules","rules":[{"toolName":"Read"}],"behavior":"deny","destination":"userSettings"}]`
	var ups []Update
	if err := json.Unmarshal([]byte(raw), &ups); err != nil {
		t.Fatal(err)
	}
	want := []Update{
		{Type: UpdateAddRules, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "npm test:*"}}, Behavior: Allow, Destination: SourceLocal},
		{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: SourceSession},
		{Type: UpdateAddDirectories, Directories: []string{"/extra"}, Destination: SourceSession},
		{Type: UpdateRemoveRules, Rules: []RuleValue{{ToolName: "Read"}}, Behavior: Deny, Destination: SourceUser},
	}
	if diff := cmp.Diff(want, ups); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	out, _ := json.Marshal(ups[1])
	if string(out) != `{"type":"setMode","mode":"acceptEdits","destination":"session"}` {
		t.Errorf("setMode marshals as %s", out)
	}
	for _, bad := range []Update{
		{Type: "nope", Destination: SourceSession},
		{Type: UpdateAddRules, Behavior: "maybe", Destination: SourceSession},
		{Type: UpdateSetMode, Mode: "fast", Destination: SourceSession},
		{Type: UpdateAddRules, Behavior: Allow, Destination: "flagSettings"},
		{Type: UpdateAddDirectories, Destination: SourceSession},
		{Type: UpdateAddRules, Behavior: Allow, Destination: SourceSession, Rules: []RuleValue{{ToolName: "Ba sh"}}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v should not validate", bad)
		}
	}
}

func TestRuleSetApply(t *testing.T) {
	var rs RuleSet
	steps := []Update{
		{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "ls"}, {ToolName: "Read"}}},
		{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal, Rules: []RuleValue{{ToolName: "Read"}}},
		{Type: UpdateAddRules, Behavior: Deny, Destination: SourceProject, Rules: []RuleValue{{ToolName: "Task"}}},
		{Type: UpdateRemoveRules, Behavior: Allow, Destination: SourceLocal, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "ls"}}},
		{Type: UpdateReplaceRules, Behavior: Ask, Destination: SourceLocal, Rules: []RuleValue{{ToolName: "WebFetch"}}},
		{Type: UpdateSetMode, Mode: ModePlan, Destination: SourceSession}, // not a rule update: ignored
	}
	for _, u := range steps {
		if err := rs.Apply(u); err != nil {
			t.Fatal(err)
		}
	}
	want := RuleSet{Sources: []SourceRules{
		{Source: SourceLocal, Allow: []string{"Read"}, Ask: []string{"WebFetch"}},
		{Source: SourceProject, Deny: []string{"Agent"}},
	}}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCheckerApply(t *testing.T) {
	cwd := t.TempDir()
	extra := t.TempDir()
	c, err := New(Config{Dirs: []string{cwd}})
	if err != nil {
		t.Fatal(err)
	}
	write := Call{Tool: "Write", Input: json.RawMessage(`{"file_path":"` + filepath.Join(extra, "a") + `","content":"x"}`)}
	npm := Call{Tool: "Bash", Input: json.RawMessage(`{"command":"npm test"}`)}
	ctx := context.Background()
	if c.Decide(ctx, npm).Behavior != Ask {
		t.Fatal("npm test should be asked at first")
	}
	// The user picks the suggestion: "always allow".
	d := c.Decide(ctx, npm)
	if diff := cmp.Diff([]Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal,
		Rules: []RuleValue{{ToolName: "Bash", RuleContent: "npm test:*"}}}}, d.Suggestions); diff != "" {
		t.Fatalf("suggestions (-want +got):\n%s", diff)
	}
	if err := c.Apply(d.Suggestions...); err != nil {
		t.Fatal(err)
	}
	if got := c.Decide(ctx, npm); got.Behavior != Allow || got.Rule != "Bash(npm test:*)" || got.RuleSource != SourceLocal {
		t.Errorf("after the update: %+v", got)
	}
	if err := c.Apply(Update{Type: UpdateAddDirectories, Directories: []string{extra}, Destination: SourceSession},
		Update{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: SourceSession}); err != nil {
		t.Fatal(err)
	}
	if c.Mode() != ModeAcceptEdits || len(c.Dirs()) != 2 || c.Decide(ctx, write).Behavior != Allow {
		t.Errorf("mode %s dirs %q write %+v", c.Mode(), c.Dirs(), c.Decide(ctx, write))
	}
	// All or nothing, and no bypass unless it was enabled.
	if err := c.Apply(Update{Type: UpdateSetMode, Mode: ModePlan, Destination: SourceSession},
		Update{Type: UpdateSetMode, Mode: ModeBypass, Destination: SourceSession}); err == nil || c.Mode() != ModeAcceptEdits {
		t.Errorf("bypass without AllowBypass: err %v, mode %s", err, c.Mode())
	}
	if err := c.Apply(Update{Type: UpdateRemoveDirectories, Directories: []string{cwd}, Destination: SourceSession}); err == nil {
		t.Error("the working directory cannot be removed")
	}
	if err := c.SetMode(ModeDefault); err != nil || c.Mode() != ModeDefault {
		t.Errorf("SetMode: %v %s", err, c.Mode())
	}
}

func TestSuggestions(t *testing.T) {
	cwd := t.TempDir()
	c, _ := New(Config{Dirs: []string{cwd}})
	ctx := context.Background()
	call := func(tool, input string) Decision {
		return c.Decide(ctx, Call{Tool: tool, Input: json.RawMessage(input)})
	}
	tests := []struct {
		d    Decision
		want []Update
	}{
		{call("Write", `{"file_path":"`+cwd+`/a","content":"x"}`), []Update{{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: SourceSession}}},
		{call("Read", `{"file_path":"/etc/hosts"}`), []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceSession, Rules: []RuleValue{{ToolName: "Read", RuleContent: "//etc/**"}}}}},
		{call("Bash", `{"command":"npm run build -- --prod && go test ./..."}`), []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal,
			Rules: []RuleValue{{ToolName: "Bash", RuleContent: "npm run build:*"}, {ToolName: "Bash", RuleContent: "go test:*"}}}}},
		{call("Bash", `{"command":"rm -r build"}`), []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal,
			Rules: []RuleValue{{ToolName: "Bash", RuleContent: "rm -r build"}}}}},
		{call("Bash", `{"command":"$X"}`), nil},
		{call("WebFetch", `{"url":"https://go.dev/doc","prompt":"p"}`), []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal,
			Rules: []RuleValue{{ToolName: "WebFetch", RuleContent: "domain:go.dev"}}}}},
		{call("mcp__gh__issue", `{}`), []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal, Rules: []RuleValue{{ToolName: "mcp__gh__issue"}}}}},
	}
	for i, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.d.Suggestions); diff != "" {
			t.Errorf("%d: %s (-want +got):\n%s", i, tt.d.Message, diff)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	cwd := t.TempDir()
	c, _ := New(Config{Dirs: []string{cwd}, AllowBypass: true})
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				c.Decide(ctx, Call{Tool: "Bash", Input: json.RawMessage(`{"command":"npm test && ls"}`)})
				c.Decide(ctx, Call{Tool: "Write", Input: json.RawMessage(`{"file_path":"` + cwd + `/a","content":""}`)})
			}
		}()
		go func(i int) {
			defer wg.Done()
			modes := []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass}
			for j := 0; j < 200; j++ {
				_ = c.SetMode(modes[(i+j)%len(modes)])
				_ = c.Apply(Update{Type: UpdateAddRules, Behavior: Allow, Destination: SourceSession, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "npm test:*"}}})
				_ = c.Rules()
				_ = c.Dirs()
			}
		}(i)
	}
	wg.Wait()
}

func TestClassifier(t *testing.T) {
	cwd := t.TempDir()
	var asked []string
	var mu sync.Mutex
	cl := ClassifierFunc(func(_ context.Context, r ClassifyRequest) (ClassifierResult, error) {
		mu.Lock()
		asked = append(asked, r.Tool)
		mu.Unlock()
		switch r.Tool {
		case "Write":
			return ClassifierResult{Behavior: Deny, Reason: "not now"}, nil
		case "WebFetch":
			return ClassifierResult{}, context.DeadlineExceeded
		}
		return ClassifierResult{Behavior: Allow}, nil
	})
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Ask: []string{"Bash(git push:*)"}}}}
	c, _ := New(Config{Mode: ModeAuto, Dirs: []string{cwd}, Classifier: cl, Rules: rs})
	ctx := context.Background()
	d := func(tool, input string) Decision {
		return c.Decide(ctx, Call{Tool: tool, Input: json.RawMessage(input)})
	}
	if got := d("Bash", `{"command":"npm test"}`); got.Behavior != Allow || got.ReasonType != ReasonClassifier {
		t.Errorf("npm test: %+v", got)
	}
	if got := d("Write", `{"file_path":"`+cwd+`/a","content":""}`); got.Behavior != Deny || got.ReasonType != ReasonClassifier {
		t.Errorf("Write: %+v", got)
	}
	if got := d("WebFetch", `{"url":"https://x.org","prompt":"p"}`); got.Behavior != Ask {
		t.Errorf("a classifier error must ask: %+v", got)
	}
	before := len(asked)
	if got := d("Bash", `{"command":"git push"}`); got.Behavior != Ask || got.ReasonType != ReasonRule {
		t.Errorf("an ask rule must reach a person: %+v", got)
	}
	if got := d("Write", `{"file_path":"`+cwd+`/.git/config","content":""}`); got.Behavior != Ask {
		t.Errorf("a protected path must reach a person: %+v", got)
	}
	if len(asked) != before {
		t.Errorf("the classifier was asked about firm asks: %q", asked[before:])
	}
}
