package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// TestPermissionRequestFields: the CanUseTool callback gets the tool's
// display name, a description (a file tool's path relative to Cwd, or
// absolute outside it; Bash's description, or else its command) and a
// blocked path only for a path outside the working directories, as the
// reference's can_use_tool request has them.
func TestPermissionRequestFields(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	// A link inside cwd that leads out of it: lexically inside, the
	// checker still judges the path outside, and the host must see it.
	if err := os.Symlink(outside, filepath.Join(cwd, "escape")); err != nil {
		t.Fatal(err)
	}
	type fields struct{ DisplayName, Description, BlockedPath string }
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  fields
	}{
		{"Write inside cwd", "Write", map[string]any{"file_path": filepath.Join(cwd, "sub", "a.txt"), "content": "x"},
			fields{"Write", filepath.Join("sub", "a.txt"), ""}},
		{"Write outside cwd", "Write", map[string]any{"file_path": filepath.Join(outside, "b.txt"), "content": "x"},
			fields{"Write", filepath.Join(outside, "b.txt"), filepath.Join(outside, "b.txt")}},
		{"Write through a link out of cwd", "Write", map[string]any{"file_path": filepath.Join(cwd, "escape", "c.txt"), "content": "x"},
			fields{"Write", filepath.Join("escape", "c.txt"), filepath.Join(outside, "c.txt")}},
		{"Bash with a description", "Bash", map[string]any{"command": "touch made", "description": "Make a file"},
			fields{"Bash", "Make a file", ""}},
		{"Bash without one", "Bash", map[string]any{"command": "touch made"},
			fields{"Bash", "touch made", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", tc.tool, tc.input), agentlooptest.Text("done"))
			var got []fields
			_, _ = agentloop.Query(context.Background(), "go", &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{tc.tool},
				SettingSources: []settings.SettingSource{}, NoSessionPersistence: true,
				CanUseTool: func(_ context.Context, r agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					got = append(got, fields{r.DisplayName, r.Description, r.BlockedPath})
					return agentloop.Deny("no"), nil
				}}).Collect()
			if diff := cmp.Diff([]fields{tc.want}, got); diff != "" {
				t.Errorf("permission requests (-want +got):\n%s", diff)
			}
		})
	}
}
