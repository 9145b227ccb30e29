package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

func TestAutoModeClassifier(t *testing.T) {
	for _, tc := range []struct {
		verdict  string
		wantRun  bool
		wantText string
	}{
		{`{"decision":"allow","reason":"a project file"}`, true, ""},
		{`{"decision":"deny","reason":"outside the project"}`, false, "outside the project"},
		{`I am not sure.`, false, "touch"}, // undecided: asked, and nobody can be asked
	} {
		t.Run(tc.verdict, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch made-it"}),
				agentlooptest.Text("done"))
			var classified int
			srv.Route(func(r *agentlooptest.Request) bool {
				if len(r.Params.Tools) == 0 && strings.Contains(r.SystemText(), "autonomous coding agent") {
					classified++
					return true
				}
				return false
			}, agentlooptest.Text(tc.verdict))
			dir := t.TempDir()
			msgs, _ := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
				Tools: []string{"Bash"}, PermissionMode: agentloop.PermissionAuto, SettingSources: []settings.SettingSource{}}).Collect()
			_, err := os.Stat(filepath.Join(dir, "made-it"))
			if ran := err == nil; ran != tc.wantRun || classified != 1 {
				t.Fatalf("ran %v (want %v), classifier calls %d", ran, tc.wantRun, classified)
			}
			res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			if _, ok := res.ModelUsage["claude-haiku-5-5"]; !ok {
				t.Errorf("the classifier's cost is not counted: %v", keys(res.ModelUsage))
			}
			if tc.wantText != "" {
				var main []*agentlooptest.Request
				for _, r := range srv.Requests() {
					if len(r.Params.Tools) > 0 {
						main = append(main, r)
					}
				}
				tr, _ := main[1].ToolResult("toolu_1")
				if !strings.Contains(tr.ResultText(), tc.wantText) {
					t.Errorf("denial = %q, want it to mention %q", tr.ResultText(), tc.wantText)
				}
			}
		})
	}
}

// TestAutoModeRules: the settings' autoMode object reaches the
// classifier: a hard_deny rule is in its instructions, "$defaults" keeps
// agentloop's own text, and a repository's file cannot widen what it
// approves (its allow list is dropped, its deny rules kept).
func TestAutoModeRules(t *testing.T) {
	for _, tc := range []struct {
		name             string
		settings         string // inline settings (--settings source)
		project          string // .claude/settings.json
		want, wantAbsent []string
	}{
		{name: "defaults", want: []string{"Approve actions that a careful engineer"}},
		{name: "hard deny", settings: `{"autoMode": {"hard_deny": ["Never run npm publish"], "allow": ["$defaults", "Running make"]}}`,
			want: []string{"Never run npm publish", "Running make", "Approve actions that a careful engineer"}},
		{name: "allow replaces defaults", settings: `{"autoMode": {"allow": ["Only reading files"]}}`,
			want: []string{"Only reading files"}, wantAbsent: []string{"Approve actions that a careful engineer"}},
		{name: "repository cannot widen", project: `{"autoMode": {"allow": ["Anything at all"], "hard_deny": ["Never touch prod"]}}`,
			want: []string{"Never touch prod"}, wantAbsent: []string{"Anything at all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch made-it"}),
				agentlooptest.Text("done"))
			var system string
			srv.Route(func(r *agentlooptest.Request) bool {
				if len(r.Params.Tools) == 0 && strings.Contains(r.SystemText(), "autonomous coding agent") {
					system = r.SystemText()
					return true
				}
				return false
			}, agentlooptest.Text(`{"decision":"deny","reason":"no"}`))
			dir := t.TempDir()
			sources := []settings.SettingSource{}
			if tc.project != "" {
				os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
				os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(tc.project), 0o644)
				sources = []settings.SettingSource{settings.Project}
			}
			if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
				Tools: []string{"Bash"}, PermissionMode: agentloop.PermissionAuto, SettingSources: sources,
				Settings: tc.settings}).Collect(); err != nil {
				t.Fatal(err)
			}
			if system == "" {
				t.Fatal("the classifier was not asked")
			}
			for _, w := range tc.want {
				if !strings.Contains(system, w) {
					t.Errorf("classifier instructions lack %q:\n%s", w, system)
				}
			}
			for _, w := range tc.wantAbsent {
				if strings.Contains(system, w) {
					t.Errorf("classifier instructions have %q:\n%s", w, system)
				}
			}
		})
	}
}

// TestAutoModeClassifyAllShell: with autoMode.classifyAllShell, an allow
// rule does not settle a shell command in auto mode: the classifier is
// asked, and its denial stands. Without it (the control) the rule runs
// the command unasked.
func TestAutoModeClassifyAllShell(t *testing.T) {
	for _, tc := range []struct {
		name        string
		settings    string
		wantAsked   bool
		wantCreated bool
	}{
		{"control", `{"permissions": {"allow": ["Bash(touch *)"]}}`, false, true},
		{"classifyAllShell", `{"permissions": {"allow": ["Bash(touch *)"]}, "autoMode": {"classifyAllShell": true}}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch made-it"}),
				agentlooptest.Text("done"))
			asked := 0
			srv.Route(func(r *agentlooptest.Request) bool {
				if len(r.Params.Tools) == 0 && strings.Contains(r.SystemText(), "autonomous coding agent") {
					asked++
					return true
				}
				return false
			}, agentlooptest.Text(`{"decision":"deny","reason":"not now"}`))
			dir := t.TempDir()
			if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
				Tools: []string{"Bash"}, PermissionMode: agentloop.PermissionAuto, SettingSources: []settings.SettingSource{},
				Settings: tc.settings}).Collect(); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(dir, "made-it"))
			if (asked > 0) != tc.wantAsked || (err == nil) != tc.wantCreated {
				t.Errorf("classifier asked %d times, file created %v; want asked %v, created %v", asked, err == nil, tc.wantAsked, tc.wantCreated)
			}
		})
	}
}
