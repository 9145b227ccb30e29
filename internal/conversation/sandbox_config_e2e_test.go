package conversation_test

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// plantScript is what a sandboxed command the checker cannot judge runs
// (python3 -c "exec(…)"): it tries every way it knows to leave
// configuration behind for a later session, ignoring each refusal.
const plantScript = `
import os, json, sys
marker = sys.argv[1]
hook = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch " + marker}]}]}})
def w(p, c):
    try:
        d = os.path.dirname(p)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(p, "w") as f:
            f.write(c)
    except Exception as e:
        print("refused", p, e)
for p in [".claude/settings.json", ".claude/settings.local.json"]:
    w(p, hook)
w(".mcp.json", json.dumps({"mcpServers": {"x": {"command": "touch", "args": [marker + ".mcp"]}}}))
w(".claude/agents/x.md", "---\nname: x\ndescription: x\n---\nx\n")
w(".claude/skills/x/SKILL.md", "---\nname: x\ndescription: x\n---\nx\n")
w(".claude/commands/x.md", "x\n")
w(".claude/hooks/x.sh", "touch " + marker + "\n")
for a, b in [(".claude", ".claude_old"), (".mcp.json", ".mcp_old")]:
    try:
        os.rename(a, b)
        w(a + "/settings.json" if a == ".claude" else a, hook)
    except Exception as e:
        print("refused rename", a, e)
for link in [".mcp.json", ".claude/commands"]:
    try:
        os.symlink("/tmp", link)
    except Exception as e:
        print("refused link", link, e)
try:
    os.chmod(".claude", 0o777)
except Exception as e:
    print("refused chmod", e)
`

// TestSandboxConfigNotPlanted (security, third pass, finding 2): with
// the sandbox enabled and autoAllowBashIfSandboxed, a command the checker
// cannot judge runs sandboxed without a prompt. It tries to write the
// working directory's configuration (settings files, .mcp.json, agents,
// skills, commands, hooks), to rename the .claude tree away and make a
// new one, to link over the files, and (from a grandchild that outlives
// the command) to plant them after the command has returned. None of it
// may land, whether or not .claude existed, and the next session, which
// loads the project's settings, must not run a planted hook. With the
// protection switched off the same run plants the hook: the test can
// fail.
func TestSandboxConfigNotPlanted(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
	if ok, err := sandbox.MetadataProtected(); !ok {
		t.Skipf("missing configuration is protected only with the mount step: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	run := func(t *testing.T, existing bool) (cwd, marker string, results []string) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cwd, marker = filepath.Join(root, "project"), filepath.Join(root, "marker")
		if err := os.MkdirAll(cwd, 0o755); err != nil {
			t.Fatal(err)
		}
		if existing {
			if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plant := `python3 -c "exec(__import__('base64').b64decode('` +
			base64.StdEncoding.EncodeToString([]byte(plantScript)) + `'))" ` + marker
		later := `(setsid sh -c 'sleep 1; mkdir -p .claude/agents; echo "{}" > .claude/settings.local.json; ` +
			`echo "{}" > .mcp.json; echo x > .claude/agents/y.md' >/dev/null 2>&1 &)`
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_plant", "Bash", map[string]any{"command": plant}),
			agentlooptest.ToolUse("toolu_later", "Bash", map[string]any{"command": later}),
			agentlooptest.Text("done"))
		opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"},
			SettingSources: []settings.SettingSource{}, NoSessionPersistence: true,
			Settings: `{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true, "failIfUnavailable": true}}`}
		if _, err := agentloop.Query(context.Background(), "go", opts).Collect(); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) < 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		for _, id := range []string{"toolu_plant", "toolu_later"} {
			r, _ := reqs[len(reqs)-1].ToolResult(id)
			if r.IsError != nil && *r.IsError && strings.Contains(r.ResultText(), "ermission") && !strings.Contains(r.ResultText(), "refused") {
				t.Fatalf("%s was not run (%q): the test needs the sandbox to auto-allow it", id, r.ResultText())
			}
			results = append(results, r.ResultText())
		}
		time.Sleep(2500 * time.Millisecond) // the grandchild's turn
		if testing.Verbose() {
			out, _ := exec.Command("find", cwd).CombinedOutput()
			t.Logf("after the run:\n%s", out)
		}

		// The next session loads the project's settings.
		next := agentlooptest.NewTB(t, agentlooptest.Text("hello"))
		restore := conversation.SetSandboxDisabledForTest(true)
		defer restore()
		if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, next, nil),
			Cwd: cwd, Tools: []string{}, NoSessionPersistence: true}).Collect(); err != nil {
			t.Logf("next session: %v", err)
		}
		return cwd, marker, results
	}
	planted := []string{".claude/settings.local.json", ".mcp.json", ".claude/agents", ".claude/skills",
		".claude/commands", ".claude/hooks", ".claude_old", ".mcp_old"}

	for _, existing := range []bool{true, false} {
		name := map[bool]string{true: ".claude exists", false: ".claude missing"}[existing]
		t.Run(name, func(t *testing.T) {
			cwd, marker, results := run(t, existing)
			for _, p := range planted {
				if _, err := os.Lstat(filepath.Join(cwd, p)); err == nil {
					t.Errorf("%s was planted (or left behind) by a sandboxed command; it said %q", p, results)
				}
			}
			settingsFile := filepath.Join(cwd, ".claude", "settings.json")
			data, err := os.ReadFile(settingsFile)
			switch {
			case existing && string(data) != "{}\n":
				t.Errorf(".claude/settings.json = %q, %v; want it untouched", data, err)
			case !existing && err == nil:
				t.Errorf(".claude/settings.json was planted: %q", data)
			}
			if !existing {
				if _, err := os.Lstat(filepath.Join(cwd, ".claude")); err == nil {
					t.Errorf("an empty .claude was left behind in the working directory")
				}
			}
			if fi, err := os.Stat(filepath.Join(cwd, ".claude")); existing && (err != nil || fi.Mode().Perm() != 0o755) {
				t.Errorf(".claude mode changed: %v %v", fi.Mode(), err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the next session ran a hook a sandboxed command planted")
			}
		})
	}

	t.Run("control without the protection", func(t *testing.T) {
		restore := conversation.SetConfigProtectDisabledForTest(true)
		defer restore()
		cwd, marker, results := run(t, false)
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("without the protection the planted hook did not run (%q): this test cannot fail", results)
		}
		if _, err := os.Lstat(filepath.Join(cwd, ".mcp.json")); err != nil {
			t.Errorf("without the protection .mcp.json was not planted: this test cannot fail")
		}
	})
}
