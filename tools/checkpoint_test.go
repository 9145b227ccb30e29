package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

// TestBeforeFileChange: the tools that change files call
// Env.BeforeFileChange with the physical path while the file still holds
// its old content (or does not exist yet), and a failing hook leaves the
// file untouched. A call that fails before changing anything does not
// call it.
func TestBeforeFileChange(t *testing.T) {
	dir := ftTempDir(t)
	if err := os.Symlink(dir, filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	nb, nbData := nbTestCopy(t, dir, "v45.ipynb")
	cases := []struct {
		name    string
		tl      tool.Tool
		file    string // relative to dir; "" for the notebook
		before  string // content before ("" = missing)
		input   func(p string) map[string]any
		changes bool
	}{
		{"Write creates", Write(), "w-new.txt", "", func(p string) map[string]any {
			return map[string]any{"file_path": p, "content": "new\n"}
		}, true},
		{"Write replaces", Write(), "w-old.txt", "old\n", func(p string) map[string]any {
			return map[string]any{"file_path": p, "content": "new\n"}
		}, true},
		{"Edit changes", Edit(), "e-old.txt", "old\n", func(p string) map[string]any {
			return map[string]any{"file_path": p, "old_string": "old", "new_string": "new"}
		}, true},
		{"Edit creates", Edit(), "e-new.txt", "", func(p string) map[string]any {
			return map[string]any{"file_path": p, "old_string": "", "new_string": "new\n"}
		}, true},
		{"Edit finds nothing", Edit(), "e-miss.txt", "old\n", func(p string) map[string]any {
			return map[string]any{"file_path": p, "old_string": "absent", "new_string": "new"}
		}, false},
		{"NotebookEdit changes", NotebookEdit(), "", nbData, func(p string) map[string]any {
			return map[string]any{"notebook_path": p, "cell_id": "calc", "new_source": "x = 3"}
		}, true},
	}
	for _, fail := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if fail {
				name += ", hook fails"
			}
			t.Run(name, func(t *testing.T) {
				p := nb
				if tc.file != "" {
					p = filepath.Join(dir, tc.file)
					os.Remove(p)
					if tc.before != "" {
						ftWriteFile(t, dir, tc.file, tc.before)
					}
				} else if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
				env := ftEnv(dir)
				var calls []string
				env.BeforeFileChange = func(path string) error {
					data, err := os.ReadFile(path)
					if tc.before == "" && !errors.Is(err, os.ErrNotExist) || tc.before != "" && string(data) != tc.before {
						t.Errorf("hook saw %q (%v), want the content before the change", data, err)
					}
					calls = append(calls, path)
					if fail {
						return errors.New("disk full")
					}
					return nil
				}
				// The model names the file through a link; the hook gets
				// the physical path.
				named := filepath.Join(dir, "via", filepath.Base(p))
				r := ftRun(t, tc.tl, env, tc.input(named))
				wantCalls := 0
				if tc.changes {
					wantCalls = 1
				}
				if len(calls) != wantCalls || wantCalls == 1 && calls[0] != p {
					t.Fatalf("hook calls %q, want %d with %s", calls, wantCalls, p)
				}
				data, err := os.ReadFile(p)
				unchanged := tc.before == "" && errors.Is(err, os.ErrNotExist) || tc.before != "" && string(data) == tc.before
				switch {
				case fail && tc.changes && (!r.IsError || !unchanged):
					t.Errorf("failing hook: result %q (error %v), file unchanged %v", ftText(r), r.IsError, unchanged)
				case !fail && tc.changes && (r.IsError || unchanged):
					t.Errorf("result %q (error %v), file unchanged %v", ftText(r), r.IsError, unchanged)
				}
			})
		}
	}
}
