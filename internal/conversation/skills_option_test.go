package conversation_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSkillsOptionFilters: Options.Skills decides which skills the model
// is offered (listing, init, the Skill tool), not which a user's "/name"
// prompt may load.
func TestSkillsOptionFilters(t *testing.T) {
	cwd := filesTree(t, nil)
	for _, tc := range []struct {
		name   string
		skills []string
		want   []string
		tool   bool
	}{
		{"unset", nil, []string{"notes", "pdf", "secret"}, true},
		{"all", []string{agentloop.AllSkills}, []string{"notes", "pdf", "secret"}, true},
		{"one", []string{"pdf"}, []string{"pdf"}, true},
		{"none", []string{}, []string{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			init, _ := runFiles(t, srv, cwd, "hi", &agentloop.Options{Skills: tc.skills})
			got := slices.Sorted(slices.Values(init.Init.Skills))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("init skills (-want +got):\n%s", diff)
			}
			req := srv.Requests()[0]
			if has := slices.Contains(req.ToolNames(), "Skill"); has != tc.tool {
				t.Errorf("Skill tool offered: %v, want %v", has, tc.tool)
			}
			text := allUserText(req)
			for _, n := range []string{"notes", "pdf", "secret"} {
				listed := strings.Contains(text, "- "+n+":")
				if listed != slices.Contains(tc.want, n) {
					t.Errorf("skill %s listed to the model: %v", n, listed)
				}
			}
		})
	}
	t.Run("unlisted", func(t *testing.T) {
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "secret"}),
			agentlooptest.Text("done"),
			agentlooptest.Text("read it"))
		_, diags := runFiles(t, srv, cwd, "go", &agentloop.Options{Skills: []string{"pdf", "ghost"}})
		res, _ := srv.Requests()[1].ToolResult("toolu_1")
		if res.IsError == nil || !*res.IsError || strings.Contains(string(srv.Requests()[1].Body), "THE SECRET BODY") {
			t.Errorf("the model loaded a skill it is not offered: %s", pfResultText(res))
		}
		if !hasDiag(diags, agentloop.DiagProjectFile, `"ghost"`) {
			t.Errorf("the unknown skill name is not reported: %+v", diags)
		}
		runFiles(t, srv, cwd, "/secret", &agentloop.Options{Skills: []string{"pdf"}})
		if !strings.Contains(srv.LastRequest().LastUserText(), "THE SECRET BODY") {
			t.Error("a user's /secret did not load the unlisted skill")
		}
	})
	for _, bad := range [][]string{{"*"}, {"all", "pdf"}, {"a(b)"}, {"/pdf"}, {""}} {
		_, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, agentlooptest.NewTB(t), nil), Cwd: cwd, Skills: bad})
		if !errors.Is(err, agentloop.ErrInvalidOption) {
			t.Errorf("Skills %q: error %v, want ErrInvalidOption", bad, err)
		}
	}
}
