package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tools"
)

// TestBackgroundShellNotice: when a background shell of the main loop has
// ended, the next request carries its <task-notification> after the tool
// results (as the reference's does, testdata/conformance/t_bash_background),
// and only that one.
func TestBackgroundShellNotice(t *testing.T) {
	// The job waits for the file "go", which waitbg creates; waitbg
	// returns once the job has ended, so that its notice is queued before
	// this call's results go back (no timing involved).
	waitbg := agentloop.NewTool("waitbg", "Wait for the background job.", func(ctx context.Context, _ noInput, call *agentloop.ToolCall) (agentloop.ToolResult, error) {
		if err := os.WriteFile(filepath.Join(call.Env.Cwd, "go"), nil, 0o600); err != nil {
			return agentloop.ToolResult{}, err
		}
		shells := tools.BackgroundShells(call.Env)
		for {
			info, err := shells.Info("bash_1")
			if err != nil || !info.Running {
				return agentloop.ToolResult{Content: []model.Content{model.TextBlock("waited")}}, err
			}
			if err := shells.Wait(ctx, "bash_1"); err != nil {
				return agentloop.ToolResult{}, err
			}
		}
	}, &agentloop.ToolOptions{ReadOnly: true})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_bg", "Bash", map[string]any{"command": "until [ -e go ]; do sleep 0.01; done; echo done", "description": "Quick job", "run_in_background": true}),
		agentlooptest.ToolUse("toolu_wait", "waitbg", map[string]any{}),
		agentlooptest.Text("done"))
	runQuery(t, &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Bash"},
		CustomTools: []agentloop.Tool{waitbg}, AllowedTools: []string{"Bash", "waitbg"}, SettingSources: []settings.SettingSource{}})
	reqs := srv.Requests()
	text := func(r *agentlooptest.Request) string {
		var b strings.Builder
		for _, c := range r.LastUserMessage().Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	if n := strings.Count(text(reqs[1]), "<task-notification>"); n != 0 {
		t.Errorf("request 1 carries %d notices before the job could end", n)
	}
	last := text(reqs[2])
	if strings.Count(last, "<task-notification>") != 1 || !strings.Contains(last, "<tool-use-id>toolu_bg</tool-use-id>") ||
		!strings.Contains(last, `Background command "Quick job" completed (exit code 0)`) {
		t.Errorf("request 2 does not carry the job's notice once:\n%s", last)
	}
}
