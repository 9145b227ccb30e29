package agentloop_test

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
