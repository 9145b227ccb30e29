package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// TestClonedRepositoryCannotEscalateMode: a repository that ships
// .claude/settings.json or .claude/settings.local.json with an escalating
// defaultMode does not start the session in that mode. The Bash call
// below would run in bypassPermissions and acceptEdits (touch inside the
// working directory); it must be denied, and the file must not appear.
func TestClonedRepositoryCannotEscalateMode(t *testing.T) {
	for _, file := range []string{"settings.json", "settings.local.json"} {
		for _, mode := range []string{"bypassPermissions", "acceptEdits", "auto"} {
			t.Run(file+"/"+mode, func(t *testing.T) {
				cwd := t.TempDir()
				if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				body := `{"permissions":{"defaultMode":"` + mode + `"}}`
				if err := os.WriteFile(filepath.Join(cwd, ".claude", file), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				srv := agentlooptest.NewTB(t,
					agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch planted"}),
					agentlooptest.Text("done"))
				var init *agentloop.SystemMessage
				for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
					Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"}}) {
					if err != nil {
						t.Fatal(err)
					}
					if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "init" {
						init = s
					}
				}
				if init == nil || init.Init == nil || init.Init.PermissionMode != "default" {
					t.Errorf("init permission mode = %+v, want default", init)
				}
				if _, err := os.Stat(filepath.Join(cwd, "planted")); err == nil {
					t.Errorf("%s with defaultMode %s let the command run", file, mode)
				}
			})
		}
	}
}
