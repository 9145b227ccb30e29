package agentloop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// adversarialCase is one entry of internal/permission/testdata/adversarial.json:
// a call that a narrower rule must not let through.
type adversarialCase struct {
	Name       string            `json:"name"`
	Allow      []string          `json:"rules_allow"`
	Deny       []string          `json:"rules_deny"`
	Ask        []string          `json:"rules_ask"`
	Mode       string            `json:"mode"`
	Tool       string            `json:"tool"`
	Input      map[string]any    `json:"input"`
	SideEffect string            `json:"side_effect_path"`
	Setup      []json.RawMessage `json:"setup"`
}

// TestAdversarialThroughTheLoop runs every adversarial case whose call would
// leave a file behind through the real loop, with the real tools, and checks
// that the file does not exist afterwards: the call was not allowed, and did
// not run.
func TestAdversarialThroughTheLoop(t *testing.T) {
	b, err := os.ReadFile("internal/permission/testdata/adversarial.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []adversarialCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, tc := range file.Cases {
		if tc.SideEffect == "" || (tc.Tool != "Bash" && tc.Tool != "Write" && tc.Tool != "Edit") {
			continue
		}
		ran++
		t.Run(tc.Name, func(t *testing.T) {
			root := t.TempDir()
			cwd, out, home := filepath.Join(root, "work"), filepath.Join(root, "out"), filepath.Join(root, "home")
			for _, d := range []string{cwd, out, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HOME", home)
			expand := func(s string) string {
				upper := filepath.Join(filepath.Dir(cwd), strings.ToUpper(filepath.Base(cwd)))
				return strings.NewReplacer("$CWDUPPER", upper, "$CWD", cwd, "$OUT", out, "$HOME", home).Replace(s)
			}
			at := func(p string) string {
				p = expand(p)
				if !filepath.IsAbs(p) {
					p = filepath.Join(cwd, p)
				}
				return p
			}
			for _, raw := range tc.Setup {
				var step map[string]json.RawMessage
				_ = json.Unmarshal(raw, &step)
				for kind, arg := range step {
					var one string
					var two []string
					_ = json.Unmarshal(arg, &one)
					_ = json.Unmarshal(arg, &two)
					var err error
					switch kind {
					case "mkdir":
						err = os.MkdirAll(at(one), 0o755)
					case "file", "exec":
						mode := os.FileMode(0o644)
						if kind == "exec" {
							mode = 0o755
						}
						if err = os.MkdirAll(filepath.Dir(at(two[0])), 0o755); err == nil {
							err = os.WriteFile(at(two[0]), []byte(two[1]), mode)
						}
					case "symlink":
						err = os.Symlink(expand(two[1]), at(two[0]))
					}
					if err != nil {
						t.Fatalf("setup %s %s: %v", kind, arg, err)
					}
				}
			}
			input := map[string]any{}
			for k, v := range tc.Input {
				if s, ok := v.(string); ok {
					v = expand(s)
				}
				input[k] = v
			}
			rules := func(rs []string) []string {
				var outRules []string
				for _, r := range rs {
					outRules = append(outRules, expand(r))
				}
				return outRules
			}
			perms, _ := json.Marshal(map[string]any{"permissions": map[string]any{
				"allow": rules(tc.Allow), "deny": rules(tc.Deny), "ask": rules(tc.Ask)}})
			srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_x", tc.Tool, input), agentlooptest.Text("done"))
			// In auto mode the classifier's requests (no tools) get an
			// answer it cannot act on, so the call falls back to asking.
			srv.Route(func(r *agentlooptest.Request) bool { return len(r.Params.Tools) == 0 }, agentlooptest.Text("not sure"))
			_, _ = agentloop.Query(context.Background(), "go", &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash", "Write", "Edit", "Read"},
				PermissionMode: agentloop.PermissionMode(tc.Mode), Settings: string(perms),
				SettingSources: []settings.SettingSource{},
			}).Result()
			if _, err := os.Lstat(filepath.Join(cwd, tc.SideEffect)); err == nil {
				t.Fatalf("BYPASS: %s %v ran and created %s", tc.Tool, input, tc.SideEffect)
			}
			var main []*agentlooptest.Request
			for _, r := range srv.Requests() {
				if len(r.Params.Tools) > 0 {
					main = append(main, r)
				}
			}
			if len(main) < 2 {
				t.Fatalf("the run stopped after %d requests", len(main))
			}
			tr, _ := main[1].ToolResult("toolu_x")
			if tr.IsError == nil || !*tr.IsError {
				t.Errorf("the call was not refused: %q", tr.ResultText())
			}
		})
	}
	if ran < 100 {
		t.Errorf("only %d adversarial cases ran through the loop, want at least 100", ran)
	}
}
