package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// TestSandboxDefaultBackgroundLinkSwap (adversarial finding 5): an
// approved background command swaps a checked directory for a link to
// outside the working directory after a later foreground command was
// judged; the foreground write `echo x > sub/f`, inside the working
// directory when checked, then lands outside. The checker cannot see
// this; the default sandbox stops it. With the sandbox turned off the
// same run writes the outside file: the test can fail.
func TestSandboxDefaultBackgroundLinkSwap(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
	run := func(t *testing.T, extra string, escape bool) (target, result string, asked []string) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cwd, out := filepath.Join(root, "project"), filepath.Join(root, "outside")
		for _, d := range []string{filepath.Join(cwd, "sub"), out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		target = filepath.Join(out, "f")
		swap := "ln -s " + out + " link_tmp && sleep 0.5 && mv sub sub_old && mv -T link_tmp sub"
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_bg", "Bash", map[string]any{"command": swap, "run_in_background": true}),
			agentlooptest.ToolUse("toolu_fg", "Bash", map[string]any{"command": "sleep 2; echo x > sub/f", "dangerouslyDisableSandbox": escape}),
			agentlooptest.Text("done"))
		var mu sync.Mutex
		opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"},
			PermissionMode: agentloop.PermissionAcceptEdits, SettingSources: []settings.SettingSource{},
			NoSessionPersistence: true, Settings: extra,
			CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
				var in struct{ Command string }
				json.Unmarshal(req.Input, &in)
				if in.Command == swap { // the person approves the background command
					return agentloop.Allow(), nil
				}
				mu.Lock()
				asked = append(asked, in.Command)
				mu.Unlock()
				return agentloop.Deny("not approved"), nil
			}}
		if _, err := agentloop.Query(context.Background(), "go", opts).Collect(); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) < 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		if bg, _ := reqs[1].ToolResult("toolu_bg"); bg.IsError != nil && *bg.IsError {
			t.Fatalf("the background command did not start: %q", bg.ResultText())
		}
		fg, _ := reqs[2].ToolResult("toolu_fg")
		if fi, err := os.Lstat(filepath.Join(cwd, "sub")); !escape && (err != nil || fi.Mode()&os.ModeSymlink == 0) {
			t.Fatalf("the background command did not swap sub for a link (%v): the test does not reproduce the race", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return target, fg.ResultText(), asked
	}

	target, result, asked := run(t, "", false)
	if len(asked) > 0 {
		t.Errorf("the checker asked about %q: the foreground write must be one it judged inside the working directory", asked)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the default sandbox let the swapped link redirect a checked write outside the working directory (%s); the tool said %q", target, result)
	}
	if !strings.Contains(result, "Permission denied") && !strings.Contains(result, "Read-only file system") {
		t.Errorf("tool result %q does not show the kernel's refusal", result)
	}

	// The model cannot step out of the default sandbox on its own: its
	// dangerouslyDisableSandbox turns the checked write into a question,
	// which the person here refuses.
	t.Run("dangerouslyDisableSandbox is asked", func(t *testing.T) {
		target, result, asked := run(t, "", true)
		if len(asked) != 1 || !strings.Contains(asked[0], "echo x > sub/f") {
			t.Errorf("asked about %q, want the foreground write that leaves the sandbox", asked)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("the model's dangerouslyDisableSandbox let the write land outside (%s); the tool said %q", target, result)
		}
	})

	t.Run("control with the sandbox off", func(t *testing.T) {
		target, result, asked := run(t, `{"sandbox": {"enabled": false}}`, false)
		if len(asked) > 0 {
			t.Errorf("the checker asked about %q", asked)
		}
		if _, err := os.Stat(target); err != nil {
			t.Errorf("with the sandbox off the write did not land outside (%q): this test cannot fail", result)
		}
	})
}
