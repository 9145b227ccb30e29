package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// A permission update returned by CanUseTool takes effect in the session at
// once and is written to the settings file of its destination.
func TestCanUseToolUpdatedPermissions(t *testing.T) {
	asked := 0
	can := func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
		asked++
		return agentloop.PermissionResult{Behavior: "allow", UpdatedPermissions: []agentloop.PermissionUpdate{{
			Type: settings.AddRules, Behavior: settings.Allow, Destination: settings.LocalSettings,
			Rules: []settings.RuleValue{{ToolName: "Bash", RuleContent: "touch:*"}},
		}}}, nil
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch one"}),
		agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "touch two"}),
		agentlooptest.Text("done"))
	cwd := t.TempDir()
	if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, CanUseTool: can, SettingSources: []settings.SettingSource{}}).Result(); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("asked %d times, want once: the added rule should allow the second call", asked)
	}
	for _, f := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(cwd, f)); err != nil {
			t.Errorf("%s was not created", f)
		}
	}
	b, err := os.ReadFile(filepath.Join(cwd, ".claude", "settings.local.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Permissions struct{ Allow []string } `json:"permissions"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Permissions.Allow) != 1 || st.Permissions.Allow[0] != "Bash(touch:*)" {
		t.Errorf("settings.local.json = %s", b)
	}
}

// A malformed settings file stops the session before any model call, with
// an error naming the file and the field.
func TestMalformedSettings(t *testing.T) {
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := `{"permissions": {"allow": ["Read", 7]}}`
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t)
	_, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd}).Result()
	if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), "settings.json") ||
		!strings.Contains(err.Error(), "permissions.allow[1]") || srv.Len() != 0 {
		t.Errorf("err = %v, %d requests", err, srv.Len())
	}
}
