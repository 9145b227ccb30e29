package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// TestToolEnvironment: Bash commands and command hooks see the settings'
// env and Options.Env, and not agentloop's own API credentials unless
// ExposeCredentials is set.
func TestToolEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-secret")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-test-secret")
	for _, expose := range []bool{false, true} {
		name := "scrubbed"
		if expose {
			name = "exposed"
		}
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			st := `{"env":{"FROM_SETTINGS":"s1","SHADOWED":"settings"},
			"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",
			"command":"echo \"k=$ANTHROPIC_API_KEY t=$ANTHROPIC_AUTH_TOKEN s=$FROM_SETTINGS o=$FROM_OPT\" > hook.txt"}]}]}}`
			if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(st), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := `echo "k=$ANTHROPIC_API_KEY t=$ANTHROPIC_AUTH_TOKEN s=$FROM_SETTINGS o=$FROM_OPT w=$SHADOWED" > bash.txt`
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": cmd}),
				agentlooptest.Text("done"))
			if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"},
				AllowedTools: []string{"Bash"}, ExposeCredentials: expose,
				Env: map[string]string{"FROM_OPT": "o1", "SHADOWED": "option"},
			}).Result(); err != nil {
				t.Fatal(err)
			}
			creds := "k= t="
			if expose {
				creds = "k=sk-test-secret t=tok-test-secret"
			}
			for file, want := range map[string]string{
				"bash.txt": creds + " s=s1 o=o1 w=option",
				"hook.txt": creds + " s=s1 o=o1",
			} {
				b, err := os.ReadFile(filepath.Join(cwd, file))
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				if got := strings.TrimSpace(string(b)); got != want {
					t.Errorf("%s = %q, want %q", file, got, want)
				}
			}
		})
	}
}
