package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// TestCheckedPathThroughTheLoop: a link swapped between the permission
// check and the run (here by the CanUseTool callback, the seam between the
// two; in real life a background command) does not take Write elsewhere:
// the tool writes the file that was checked, or refuses when a link now
// stands on its path.
func TestCheckedPathThroughTheLoop(t *testing.T) {
	for _, c := range []struct {
		name    string
		swap    func(cwd, out string) error
		refused bool
	}{
		{"link re-pointed", func(cwd, out string) error {
			if err := os.Remove(filepath.Join(cwd, "l")); err != nil {
				return err
			}
			return os.Symlink(out, filepath.Join(cwd, "l"))
		}, false},
		{"directory replaced by a link", func(cwd, out string) error {
			if err := os.Rename(filepath.Join(cwd, "real"), filepath.Join(cwd, "real.old")); err != nil {
				return err
			}
			return os.Symlink(out, filepath.Join(cwd, "real"))
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cwd, out := filepath.Join(root, "work"), filepath.Join(root, "out")
			for _, d := range []string{filepath.Join(cwd, "real"), out} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("real", filepath.Join(cwd, "l")); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(cwd, "l", "f.txt")
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": target, "content": "NEW"}),
				agentlooptest.Text("done"))
			asked := 0
			can := func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
				asked++
				if err := c.swap(cwd, out); err != nil {
					t.Error(err)
				}
				return agentloop.Allow(), nil
			}
			if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Write"}, CanUseTool: can,
				SettingSources: []settings.SettingSource{},
			}).Result(); err != nil {
				t.Fatal(err)
			}
			if asked != 1 {
				t.Fatalf("CanUseTool was asked %d times, want 1", asked)
			}
			if _, err := os.Lstat(filepath.Join(out, "f.txt")); err == nil {
				t.Fatalf("the write followed the swapped link to %s", filepath.Join(out, "f.txt"))
			}
			reqs := srv.Requests()
			tr, _ := reqs[len(reqs)-1].ToolResult("toolu_w")
			isErr := tr.IsError != nil && *tr.IsError
			if isErr != c.refused {
				t.Fatalf("is_error = %v, want %v: %s", isErr, c.refused, tr.ResultText())
			}
			if c.refused && !strings.Contains(tr.ResultText(), "symbolic link") {
				t.Errorf("the refusal does not say why: %s", tr.ResultText())
			}
			if !c.refused {
				if b, _ := os.ReadFile(filepath.Join(cwd, "real", "f.txt")); string(b) != "NEW" {
					t.Errorf("the checked file holds %q, want NEW", b)
				}
			}
		})
	}
}
