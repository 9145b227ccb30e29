package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// TestSettingsFilesProtected: a settings file the session read is a
// protected path for the file tools wherever it lies, even where its
// name says nothing (a --settings file outside any .claude directory):
// in bypassPermissions the model's Write to it is asked, and refused here,
// so the file keeps its content. A file of the same name that is not a
// settings file (the control) is written without a question.
func TestSettingsFilesProtected(t *testing.T) {
	for _, c := range []struct {
		name      string
		target    string // "settings" or "other"
		wantAsked bool
	}{
		{"--settings file", "settings", true},
		{"control: another file", "other", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cwd, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			flag := filepath.Join(cwd, "policy.json")
			other := filepath.Join(cwd, "other.json")
			for _, f := range []string{flag, other} {
				if err := os.WriteFile(f, []byte(`{}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			target := map[string]string{"settings": flag, "other": other}[c.target]
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_r", "Read", map[string]any{"file_path": target}),
				agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": target,
					"content": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}`}),
				agentlooptest.Text("done"))
			var asked atomic.Int32
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Read", "Write"},
				PermissionMode: agentloop.PermissionBypass, SettingSources: []settings.SettingSource{}, Settings: flag,
				NoSessionPersistence: true,
				CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					asked.Add(1)
					return agentloop.Deny("no"), nil
				}}
			if _, err := agentloop.Query(context.Background(), "go", o).Collect(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(target)
			if (asked.Load() > 0) != c.wantAsked || (string(got) == `{}`) != c.wantAsked {
				t.Errorf("asked %d times, file now %s; want asked %v and the file untouched %v", asked.Load(), got, c.wantAsked, c.wantAsked)
			}
			var v any
			if json.Unmarshal(got, &v) != nil {
				t.Errorf("file is not JSON any more: %s", got)
			}
		})
	}
}
