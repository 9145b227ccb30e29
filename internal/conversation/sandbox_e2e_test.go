package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// TestSandboxPlanModeThroughTheLoop: a plan-mode run whose Bash call
// writes outside the working directory is stopped by the kernel even when
// the permission check is forced to allow it. With the sandbox off as
// well, the same run writes the file: the test can fail.
func TestSandboxPlanModeThroughTheLoop(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
	t.Cleanup(conversation.SetForceAllowForTest(true))
	run := func(t *testing.T) (target, result string, init *agentloop.SystemMessage) {
		root := t.TempDir()
		cwd, out := filepath.Join(root, "project"), filepath.Join(root, "outside")
		for _, d := range []string{cwd, out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		target = filepath.Join(out, "planted")
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_b", "Bash", map[string]any{"command": "echo planted > " + target}),
			agentlooptest.Text("done"))
		msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil),
			Cwd: cwd, PermissionMode: agentloop.PermissionPlan, Tools: []string{"Bash"},
			SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if s, ok := m.(*agentloop.SystemMessage); ok && s.Init != nil && init == nil {
				init = s
			}
		}
		tr, _ := srv.Requests()[1].ToolResult("toolu_b")
		return target, tr.ResultText(), init
	}
	target, result, init := run(t)
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("plan mode wrote %s through a forced-allow Bash call; the tool said %q", target, result)
	}
	if !strings.Contains(result, "Permission denied") && !strings.Contains(result, "Read-only file system") {
		t.Errorf("tool result %q does not show the kernel's refusal", result)
	}
	if init == nil || !init.Init.SandboxEnabled {
		t.Errorf("system/init does not report the sandbox: %+v", init)
	}

	t.Run("control without the sandbox", func(t *testing.T) {
		t.Cleanup(conversation.SetSandboxDisabledForTest(true))
		target, result, _ := run(t)
		if _, err := os.Stat(target); err != nil {
			t.Errorf("without the sandbox the forced call did not write %s (%q): this test cannot fail", target, result)
		}
	})
}
