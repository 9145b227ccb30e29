package assemble

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestWorkspace(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	getwd := func() (string, error) { return root, nil }
	for _, tc := range []struct {
		name      string
		cwd       string
		extra     []string
		wantCwd   string
		wantDirs  []string
		wantError error
	}{
		{name: "getwd", wantCwd: root},
		{name: "explicit", cwd: root, extra: []string{"sub", "/abs/x/../y"}, wantCwd: root,
			wantDirs: []string{filepath.Join(root, "sub"), "/abs/y"}},
		{name: "missing", cwd: filepath.Join(root, "nope"), wantError: ErrInvalidOption},
		{name: "a file", cwd: file, wantError: ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd, dirs, err := Workspace(tc.cwd, tc.extra, getwd)
			if !errors.Is(err, tc.wantError) {
				t.Fatalf("err = %v, want %v", err, tc.wantError)
			}
			if err != nil {
				return
			}
			if cwd != tc.wantCwd {
				t.Errorf("cwd = %q, want %q", cwd, tc.wantCwd)
			}
			if diff := cmp.Diff(tc.wantDirs, dirs); diff != "" {
				t.Errorf("dirs (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, err := Workspace("", nil, func() (string, error) { return "", context.Canceled }); !errors.Is(err, context.Canceled) {
		t.Errorf("getwd failure: err = %v", err)
	}
	st := &settings.Settings{}
	st.Permissions.AdditionalDirectories = []settings.Directory{{Path: "/from/settings"}}
	if got := SettingsDirs([]string{"/a"}, st); !cmp.Equal(got, []string{"/a", "/from/settings"}) {
		t.Errorf("SettingsDirs = %q", got)
	}
}

func TestSessionID(t *testing.T) {
	if id, err := SessionID(""); err != nil || len(id) != 36 {
		t.Errorf("new id = %q, %v", id, err)
	}
	const good = "00000000-0000-4000-8000-000000000001"
	if id, err := SessionID(good); err != nil || id != good {
		t.Errorf("SessionID(good) = %q, %v", id, err)
	}
	if _, err := SessionID("not-a-uuid"); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("bad id: err = %v", err)
	}
}

func TestModeAndModel(t *testing.T) {
	withMode := func(m string) *settings.Settings {
		st := &settings.Settings{Model: "haiku"}
		st.Permissions.DefaultMode = m
		return st
	}
	for _, tc := range []struct {
		option vocab.PermissionMode
		st     *settings.Settings
		want   vocab.PermissionMode
	}{
		{"", nil, vocab.PermissionDefault},
		{"", withMode(""), vocab.PermissionDefault},
		{"", withMode("plan"), vocab.PermissionPlan},
		{vocab.PermissionAcceptEdits, withMode("plan"), vocab.PermissionAcceptEdits},
		{"", withMode("no-such-mode"), vocab.PermissionDefault},
	} {
		if got := Mode(tc.option, tc.st); got != tc.want {
			t.Errorf("Mode(%q, %+v) = %q, want %q", tc.option, tc.st, got, tc.want)
		}
	}
	st := &settings.Settings{Model: "haiku"}
	if Model("", st) == Model("", nil) {
		t.Errorf("the settings' model is not used")
	}
	if Model("opus", st) != Model("opus", nil) {
		t.Errorf("the option does not win over the settings")
	}
	main := Model("opus", nil)
	if got := Fallbacks(main, []string{"opus", "sonnet", "sonnet"}); len(got) != 1 || got[0] == main {
		t.Errorf("Fallbacks = %q", got)
	}
}

func TestAPIKeySource(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	both := env(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t"})
	for _, tc := range []struct {
		custom bool
		getenv func(string) string
		want   string
	}{
		{false, both, "ANTHROPIC_API_KEY"},
		{false, env(map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}), "ANTHROPIC_AUTH_TOKEN"},
		{false, env(nil), "none"},
		{true, both, "none"},
	} {
		if got := APIKeySource(tc.custom, tc.getenv); got != tc.want {
			t.Errorf("APIKeySource(%v) = %q, want %q", tc.custom, got, tc.want)
		}
	}
}

type fakeTool string

func (f fakeTool) Info() tool.Info { return tool.Info{Name: string(f)} }
func (f fakeTool) Run(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestSelect(t *testing.T) {
	builtin := func(n string) (tool.Tool, bool) {
		switch n {
		case "Read", "Bash", "Write", "AskUserQuestion":
			return fakeTool(n), true
		}
		return nil, false
	}
	base := ToolSet{Defaults: []string{"Read", "Bash"}, Builtin: builtin, Agent: func() tool.Tool { return fakeTool("Agent") }}
	names := func(ts []tool.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Info().Name)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		edit     func(*ToolSet)
		want     []string
		warnings int
	}{
		{"defaults", func(*ToolSet) {}, []string{"Agent", "Read", "Bash"}, 0},
		{"ask user joins the defaults", func(ts *ToolSet) { ts.AskUser = true }, []string{"Agent", "Read", "Bash", "AskUserQuestion"}, 0},
		{"none", func(ts *ToolSet) { ts.Names = []string{} }, nil, 0},
		{"named, Task, duplicates", func(ts *ToolSet) { ts.Names = []string{"Write", "Task", "Write", "Agent"} }, []string{"Write", "Agent"}, 0},
		{"default keyword", func(ts *ToolSet) { ts.Names = []string{"default", "Write"} }, []string{"Read", "Bash", "Write"}, 0},
		{"unknown names warn", func(ts *ToolSet) { ts.Names = []string{"Read", "Nope", "Bsh"} }, []string{"Read"}, 2},
		{"custom after built-in", func(ts *ToolSet) { ts.Names = []string{"Read"}; ts.Custom = []tool.Tool{fakeTool("mine")} }, []string{"Read", "mine"}, 0},
		{"disallowed removed everywhere", func(ts *ToolSet) {
			ts.Custom = []tool.Tool{fakeTool("mine")}
			ts.Disallowed = func(n string) bool { return n == "Bash" || n == "mine" || n == "Agent" }
		}, []string{"Read"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := base
			tc.edit(&ts)
			got, warnings, err := Select(ts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings = %q, want %d", warnings, tc.warnings)
			}
		})
	}
	ts := base
	ts.Custom = []tool.Tool{nil}
	if _, _, err := Select(ts); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil custom tool: err = %v", err)
	}
}
