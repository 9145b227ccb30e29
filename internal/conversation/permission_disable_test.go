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
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// The settings that turn a permission mode off, and the mode each one
// turns off.
var disableSettings = []struct {
	key  string
	mode agentloop.PermissionMode
}{
	{"disableBypassPermissionsMode", agentloop.PermissionBypass},
	{"disableAutoMode", agentloop.PermissionAuto},
}

// The settings files a test puts permissions into.
const (
	inUser    = "user"    // $CLAUDE_CONFIG_DIR/settings.json
	inProject = "project" // <cwd>/.claude/settings.json
	inInline  = "inline"  // Options.Settings (inline --settings JSON)
)

var disableWheres = []string{inUser, inProject, inInline}

// disableEnv is a session's options with permissions written to the
// settings files a test names.
type disableEnv struct {
	opts     *agentloop.Options
	srv      *agentlooptest.Server
	userFile string
	permsIn  map[string]map[string]any // where → the "permissions" object
}

func newDisableEnv(t *testing.T, replies ...agentlooptest.Reply) *disableEnv {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	srv := agentlooptest.NewTB(t, replies...)
	return &disableEnv{srv: srv, userFile: filepath.Join(cfg, "settings.json"),
		permsIn: map[string]map[string]any{},
		opts: &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
			Tools: []string{}, SettingSources: []settings.SettingSource{settings.User, settings.Project}}}
}

// set puts key: value into the permissions of the file where.
func (e *disableEnv) set(where, key string, value any) {
	if e.permsIn[where] == nil {
		e.permsIn[where] = map[string]any{}
	}
	e.permsIn[where][key] = value
}

// write writes the files and fills in Options.Settings.
func (e *disableEnv) write(t *testing.T) {
	t.Helper()
	for where, perms := range e.permsIn {
		b, err := json.Marshal(map[string]any{"permissions": perms})
		if err != nil {
			t.Fatal(err)
		}
		switch where {
		case inUser:
			writeSettingsFile(t, e.userFile, string(b))
		case inProject:
			writeSettingsFile(t, filepath.Join(e.opts.Cwd, ".claude", "settings.json"), string(b))
		case inInline:
			e.opts.Settings = string(b)
		}
	}
}

// wantDisabled is the error a session gives for key set in where.
func (e *disableEnv) wantDisabled(where, key string, mode agentloop.PermissionMode) *agentloop.PermissionModeDisabledError {
	w := &agentloop.PermissionModeDisabledError{Mode: mode, Setting: "permissions." + key}
	switch where {
	case inUser:
		w.Source, w.File = settings.UserSettings, e.userFile
	case inProject:
		w.Source, w.File = settings.ProjectSettings, filepath.Join(".claude", "settings.json")
	case inInline:
		w.Source, w.File = settings.FlagSettings, "--settings"
	}
	return w
}

// checkDisabled checks that err is the refusal want, naming the setting
// and the file in its text too.
func checkDisabled(t *testing.T, err error, want *agentloop.PermissionModeDisabledError) {
	t.Helper()
	if !errors.Is(err, agentloop.ErrPermissionModeDisabled) {
		t.Fatalf("error %v, want one matching ErrPermissionModeDisabled", err)
	}
	var got *agentloop.PermissionModeDisabledError
	if !errors.As(err, &got) {
		t.Fatalf("error %v is not a *PermissionModeDisabledError", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	for _, s := range []string{want.Setting, want.File, string(want.Mode)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

// The ways a session's starting mode is chosen.
var startPaths = []struct {
	name string
	// apply asks for mode; modeIn is the file for a settings defaultMode
	// when that is how the path asks (a file other than where, since a
	// project file may not start a session in an escalating mode).
	apply func(e *disableEnv, where string, mode agentloop.PermissionMode)
}{
	{"Options.PermissionMode", func(e *disableEnv, _ string, mode agentloop.PermissionMode) {
		e.opts.PermissionMode = mode
	}},
	{"settings defaultMode", func(e *disableEnv, where string, mode agentloop.PermissionMode) {
		in := inInline
		if where == inInline {
			in = inUser
		}
		e.set(in, "defaultMode", string(mode))
	}},
	{"main agent permissionMode", func(e *disableEnv, _ string, mode agentloop.PermissionMode) {
		e.opts.Agent = "runner"
		e.opts.Agents = map[string]agentloop.AgentDefinition{"runner": {Description: "Runs.", Prompt: "Run.", PermissionMode: mode}}
	}},
}

// A session may not start in a mode a settings file turned off, whichever
// file says so and however the mode is asked for: NewClient and Query fail
// with ErrPermissionModeDisabled and nothing is sent.
func TestPermissionModeDisabledAtStart(t *testing.T) {
	for _, ds := range disableSettings {
		for _, where := range disableWheres {
			for _, sp := range startPaths {
				t.Run(ds.key+"/"+where+"/"+sp.name, func(t *testing.T) {
					e := newDisableEnv(t, agentlooptest.Text("ok"))
					e.set(where, ds.key, "disable")
					sp.apply(e, where, ds.mode)
					e.write(t)
					want := e.wantDisabled(where, ds.key, ds.mode)
					c, err := agentloop.NewClient(e.opts)
					if err == nil {
						c.Close()
					}
					checkDisabled(t, err, want)
					wantText := "agentloop: " + want.Error()
					if sp.name == "main agent permissionMode" {
						wantText = "agentloop: agent runner: permissionMode: " + want.Error()
					}
					if err.Error() != wantText {
						t.Errorf("NewClient error %q, want %q", err, wantText)
					}
					_, err = agentloop.Query(context.Background(), "hi", e.opts).Result()
					checkDisabled(t, err, want)
					if e.srv.Len() != 0 {
						t.Errorf("%d requests sent", e.srv.Len())
					}
				})
			}
		}
	}
}

// Without the setting (or with only the other one) the same start paths
// work as before. A main agent's bypassPermissions is ignored unless the
// session was started with it allowed, as before.
func TestPermissionModeNotDisabledAtStart(t *testing.T) {
	for i, ds := range disableSettings {
		other := disableSettings[1-i].key
		for _, withOther := range []bool{false, true} {
			for _, sp := range startPaths {
				name := ds.key + "/no setting/" + sp.name
				if withOther {
					name = ds.key + "/only " + other + "/" + sp.name
				}
				t.Run(name, func(t *testing.T) {
					e := newDisableEnv(t, agentlooptest.Text("ok"))
					if withOther {
						e.set(inProject, other, "disable")
					}
					sp.apply(e, inProject, ds.mode)
					e.write(t)
					c, err := agentloop.NewClient(e.opts)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					want := ds.mode
					if sp.name == "main agent permissionMode" && ds.mode == agentloop.PermissionBypass {
						want = agentloop.PermissionDefault
					}
					if got := c.PermissionMode(); got != want {
						t.Errorf("mode %s, want %s", got, want)
					}
				})
			}
		}
	}
}

// The ways a running session's mode is switched.
var switchPaths = []struct {
	name string
	// run asks to switch to mode while a tool call waits for permission
	// (or directly, for SetPermissionMode) and returns the error or the
	// tool result text.
	run func(t *testing.T, e *disableEnv, mode agentloop.PermissionMode) (result string, err error)
}{
	{"Client.SetPermissionMode", func(t *testing.T, e *disableEnv, mode agentloop.PermissionMode) (string, error) {
		c, err := agentloop.NewClient(e.opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SetPermissionMode(agentloop.PermissionDefault); err != nil {
			t.Fatal(err)
		}
		err = c.SetPermissionMode(mode)
		if got, want := c.PermissionMode(), map[bool]agentloop.PermissionMode{true: agentloop.PermissionDefault, false: mode}[err != nil]; got != want {
			t.Errorf("mode %s after the switch (error %v), want %s", got, err, want)
		}
		return "", err
	}},
	{"CanUseTool setMode", func(t *testing.T, e *disableEnv, mode agentloop.PermissionMode) (string, error) {
		e.opts.CanUseTool = func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			return agentloop.PermissionResult{Behavior: "allow", UpdatedPermissions: []agentloop.PermissionUpdate{setMode(mode)}}, nil
		}
		return runSwitch(t, e, mode)
	}},
	{"PermissionRequest hook setMode", func(t *testing.T, e *disableEnv, mode agentloop.PermissionMode) (string, error) {
		e.opts.Hooks = map[hooks.Event][]hooks.Matcher{hooks.PermissionRequest: {{Hooks: []hooks.Callback{
			func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
				return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.PermissionRequest,
					Decision: &hooks.PermissionRequestDecision{Behavior: "allow",
						UpdatedPermissions: []settings.PermissionUpdate{setMode(mode)}}}}, nil
			}}}}}
		return runSwitch(t, e, mode)
	}},
}

func setMode(mode agentloop.PermissionMode) agentloop.PermissionUpdate {
	return agentloop.PermissionUpdate{Type: settings.SetMode, Mode: string(mode), Destination: settings.Session}
}

// runSwitch runs one turn whose tool call "act" needs permission, in
// default mode, and returns the call's result text. The mode must have
// changed to mode exactly when the call ran.
func runSwitch(t *testing.T, e *disableEnv, mode agentloop.PermissionMode) (string, error) {
	t.Helper()
	ran := false
	act := agentloop.NewTool("act", "Acts.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		ran = true
		return agentloop.TextResult("acted"), nil
	}, nil)
	e.opts.CustomTools = []agentloop.Tool{act}
	c, err := agentloop.NewClient(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetPermissionMode(agentloop.PermissionDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(context.Background(), "go").Result(); err != nil {
		t.Fatal(err)
	}
	tr, ok := e.srv.Requests()[1].ToolResult("toolu_1")
	if !ok {
		t.Fatal("no result for the act call")
	}
	want := agentloop.PermissionDefault
	if ran {
		want = mode
	}
	if got := c.PermissionMode(); got != want {
		t.Errorf("mode %s after the run (the tool ran: %v), want %s", got, ran, want)
	}
	if ran != (tr.ResultText() == "acted") {
		t.Errorf("ran %v, result %q", ran, tr.ResultText())
	}
	return tr.ResultText(), nil
}

// A running session may not switch to a mode a settings file turned off,
// by any path: the switch is refused naming the setting and the file, the
// mode stays, and a tool call whose approval carried the switch does not
// run.
func TestPermissionModeDisabledSwitch(t *testing.T) {
	for _, ds := range disableSettings {
		for _, where := range disableWheres {
			for _, sp := range switchPaths {
				t.Run(ds.key+"/"+where+"/"+sp.name, func(t *testing.T) {
					e := newDisableEnv(t, agentlooptest.ToolUse("toolu_1", "act", map[string]any{}), agentlooptest.Text("done"))
					e.set(where, ds.key, "disable")
					e.write(t)
					want := e.wantDisabled(where, ds.key, ds.mode)
					result, err := sp.run(t, e, ds.mode)
					if sp.name == "Client.SetPermissionMode" {
						checkDisabled(t, err, want)
						return
					}
					for _, s := range []string{want.Setting, want.File, string(want.Mode), "disable"} {
						if !strings.Contains(result, s) {
							t.Errorf("tool result %q does not name %q", result, s)
						}
					}
				})
			}
		}
	}
}

// Without the setting the switches work as before: a session that
// started in the mode (bypassPermissions must be allowed at start) and
// left it can switch back by every path.
func TestPermissionModeNotDisabledSwitch(t *testing.T) {
	for i, ds := range disableSettings {
		for _, withOther := range []bool{false, true} {
			for _, sp := range switchPaths {
				t.Run(ds.key+"/"+map[bool]string{false: "no setting", true: "other setting"}[withOther]+"/"+sp.name, func(t *testing.T) {
					e := newDisableEnv(t, agentlooptest.ToolUse("toolu_1", "act", map[string]any{}), agentlooptest.Text("done"))
					if withOther {
						e.set(inProject, disableSettings[1-i].key, "disable")
					}
					e.write(t)
					e.opts.PermissionMode = ds.mode
					result, err := sp.run(t, e, ds.mode)
					if err != nil {
						t.Fatal(err)
					}
					if sp.name != "Client.SetPermissionMode" && result != "acted" {
						t.Errorf("tool result %q, want the call to have run", result)
					}
				})
			}
		}
	}
}

func writeSettingsFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
