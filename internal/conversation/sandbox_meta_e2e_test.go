package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// TestSandboxMetadataThroughTheLoop: with sandbox.enabled and with the
// default sandbox, a Bash call
// that the permission check is forced to allow cannot change the mode or
// the modification time of a file outside the working directory, while
// `chmod +x build.sh` inside it works. Without the sandbox the same run
// changes the outside file: the test can fail.
func TestSandboxMetadataThroughTheLoop(t *testing.T) {
	if ok, err := sandbox.MetadataProtected(); !ok {
		t.Skipf("sandbox metadata tests skip: %v", err)
	}
	t.Cleanup(conversation.SetForceAllowForTest(true))
	known := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	type state struct {
		mode  os.FileMode
		mtime time.Time
	}
	stat := func(t *testing.T, path string) state {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return state{fi.Mode(), fi.ModTime().UTC()}
	}
	run := func(t *testing.T, sb *agentloop.SandboxSettings) (outside, script state, result string) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cwd, out := filepath.Join(root, "project"), filepath.Join(root, "outside")
		target, build := filepath.Join(out, "victim"), filepath.Join(cwd, "build.sh")
		for _, d := range []string{cwd, out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{target, build} {
			if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(f, known, known); err != nil {
				t.Fatal(err)
			}
		}
		command := "chmod 000 " + target + "; touch -d 2001-02-03 " + target + "; chmod +x build.sh"
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_m", "Bash", map[string]any{"command": command}),
			agentlooptest.Text("done"))
		_, err = agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil),
			Cwd: cwd, Tools: []string{"Bash"}, Sandbox: sb,
			SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := srv.Requests()[1].ToolResult("toolu_m")
		return stat(t, target), stat(t, build), tr.ResultText()
	}
	want := state{0o644, known}
	for _, tc := range []struct {
		name string
		sb   *agentloop.SandboxSettings
	}{{"enabled", &agentloop.SandboxSettings{Enabled: true}}, {"default", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			outside, script, result := run(t, tc.sb)
			if outside != want {
				t.Errorf("the sandboxed call changed the outside file: %v %v, want %v %v; the tool said %q",
					outside.mode, outside.mtime, want.mode, want.mtime, result)
			}
			if script.mode&0o111 == 0 {
				t.Errorf("chmod +x build.sh in the working directory did not work: %v; the tool said %q", script.mode, result)
			}
		})
	}

	t.Run("control without the sandbox", func(t *testing.T) {
		t.Cleanup(conversation.SetSandboxDisabledForTest(true))
		outside, _, result := run(t, nil)
		if outside == want {
			t.Errorf("without the sandbox the call did not change the outside file (%q): this test cannot fail", result)
		}
	})
}
