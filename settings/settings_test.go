package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// env is a project directory, a home and a managed-policy path, all
// temporary.
type env struct {
	cwd, home, managed string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root := t.TempDir()
	e := env{cwd: filepath.Join(root, "project"), home: filepath.Join(root, "home"),
		managed: filepath.Join(root, "etc", "managed-settings.json")}
	for _, d := range []string{e.cwd, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) opts() Options {
	return Options{Cwd: e.cwd, Home: e.home, ConfigDir: filepath.Join(e.home, ".claude"), ManagedPath: e.managed}
}

func (e env) path(s Source) string {
	switch s {
	case UserSettings:
		return filepath.Join(e.home, ".claude", "settings.json")
	case ProjectSettings:
		return filepath.Join(e.cwd, ".claude", "settings.json")
	case LocalSettings:
		return filepath.Join(e.cwd, ".claude", "settings.local.json")
	case PolicySettings:
		return e.managed
	case FlagSettings:
		return filepath.Join(e.cwd, "flag.json")
	}
	panic(s)
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrecedence(t *testing.T) {
	all := []Source{UserSettings, ProjectSettings, LocalSettings, FlagSettings, PolicySettings}
	cases := []struct {
		present []Source
		want    Source
	}{
		{[]Source{UserSettings}, UserSettings},
		{[]Source{UserSettings, ProjectSettings}, ProjectSettings},
		{[]Source{UserSettings, ProjectSettings, LocalSettings}, LocalSettings},
		{[]Source{UserSettings, LocalSettings, FlagSettings}, FlagSettings},
		{all, PolicySettings},
		{[]Source{ProjectSettings, PolicySettings}, PolicySettings},
		{[]Source{FlagSettings, PolicySettings}, PolicySettings},
		{[]Source{ProjectSettings, FlagSettings}, FlagSettings},
		{[]Source{UserSettings, FlagSettings}, FlagSettings},
		{nil, ""},
	}
	for _, tc := range cases {
		e := newEnv(t)
		o := e.opts()
		for _, s := range tc.present {
			body := `{"model":"` + string(s) + `","env":{"FROM":"` + string(s) + `","` + string(s) + `":"1"},
				"permissions":{"allow":["Read(` + string(s) + `)"],"defaultMode":"plan"},"custom":"` + string(s) + `"}`
			write(t, e.path(s), body)
			if s == FlagSettings {
				o.Flag = "flag.json"
			}
		}
		got, err := Load(o)
		if err != nil {
			t.Fatalf("%v: %v", tc.present, err)
		}
		if got.Model != string(tc.want) || got.Env["FROM"] != string(tc.want) ||
			got.Permissions.DefaultModeSource != tc.want {
			t.Errorf("%v: model %q env %q mode source %q, want %q", tc.present, got.Model, got.Env["FROM"],
				got.Permissions.DefaultModeSource, tc.want)
		}
		if tc.want != "" && string(got.Extra["custom"]) != `"`+string(tc.want)+`"` {
			t.Errorf("%v: custom %s", tc.present, got.Extra["custom"])
		}
		// lists concatenate, lowest precedence first; every env key survives
		var rules []string
		for _, r := range got.Permissions.Allow {
			rules = append(rules, r.Value)
		}
		var want []string
		for _, s := range all {
			for _, p := range tc.present {
				if p == s {
					want = append(want, "Read("+string(s)+")")
					if got.Env[string(s)] != "1" {
						t.Errorf("%v: env %s lost", tc.present, s)
					}
				}
			}
		}
		if !reflect.DeepEqual(rules, want) {
			t.Errorf("%v: rules %q, want %q", tc.present, rules, want)
		}
	}
}

func TestSettingSources(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(UserSettings), `{"permissions":{"allow":["A"]}}`)
	write(t, e.path(ProjectSettings), `{"permissions":{"allow":["B"]}}`)
	write(t, e.path(LocalSettings), `{"permissions":{"allow":["C"]}}`)
	write(t, e.path(PolicySettings), `{"permissions":{"allow":["M"]}}`)
	for _, tc := range []struct {
		sources []SettingSource
		want    string
	}{
		{nil, "A B C M"},
		{[]SettingSource{}, "M"},
		{[]SettingSource{Project}, "B M"},
		{[]SettingSource{Local, User}, "A C M"},
	} {
		o := e.opts()
		o.Sources = tc.sources
		s, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range s.Permissions.Allow {
			got = append(got, r.Value)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("sources %v: %q, want %q", tc.sources, got, tc.want)
		}
	}
	o := e.opts()
	o.Sources = []SettingSource{"remote"}
	if _, err := Load(o); err == nil || !strings.Contains(err.Error(), `unknown setting source "remote"`) {
		t.Errorf("err %v", err)
	}
}

func TestRuleSourceAndRoot(t *testing.T) {
	e := newEnv(t)
	o := e.opts()
	write(t, e.path(UserSettings), `{"permissions":{"deny":["Read(/secrets/**)"]}}`)
	write(t, e.path(ProjectSettings), `{"permissions":{"deny":["Edit(/build)"]}}`)
	write(t, e.path(LocalSettings), `{"permissions":{"ask":["Bash(git push:*)"]}}`)
	write(t, filepath.Join(e.cwd, "conf", "flag.json"), `{"permissions":{"allow":["Read(/docs/**)"]}}`)
	write(t, e.managed, `{"permissions":{"deny":["WebFetch"]}}`)
	o.Flag = "conf/flag.json"
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Value    string
		Behavior Behavior
		Source   Source
		File     string
		Root     string
	}
	var got []row
	for _, list := range [][]Rule{s.Permissions.Allow, s.Permissions.Deny, s.Permissions.Ask} {
		for _, r := range list {
			got = append(got, row(r))
		}
	}
	want := []row{
		{"Read(/docs/**)", Allow, FlagSettings, filepath.Join(e.cwd, "conf", "flag.json"), filepath.Join(e.cwd, "conf")},
		{"Read(/secrets/**)", Deny, UserSettings, e.path(UserSettings), filepath.Join(e.home, ".claude")},
		{"Edit(/build)", Deny, ProjectSettings, e.path(ProjectSettings), e.cwd},
		{"WebFetch", Deny, PolicySettings, e.managed, filepath.Dir(e.managed)},
		{"Bash(git push:*)", Ask, LocalSettings, e.path(LocalSettings), e.cwd},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules\n got %+v\nwant %+v", got, want)
	}
	r := s.Permissions.Ask[0]
	if c, ok := r.Content(); r.ToolName() != "Bash" || c != "git push:*" || !ok {
		t.Errorf("ToolName %q Content %q %v", r.ToolName(), c, ok)
	}
	if _, ok := s.Permissions.Deny[2].Content(); ok {
		t.Error("WebFetch has no content")
	}
	// inline --settings anchors at the project
	o.Flag = `{"permissions":{"allow":["Read(/x)"]}}`
	s, err = Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Permissions.Allow[0]; a.Source != FlagSettings || a.File != "" || a.Root != e.cwd {
		t.Errorf("inline rule %+v", a)
	}
}

func TestHooksAndDirectories(t *testing.T) {
	e := newEnv(t)
	o := e.opts()
	hook := func(cmd string) string {
		return `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + cmd + `","timeout":5}]}]},
			"permissions":{"additionalDirectories":["../shared","~/notes","/abs"]}}`
	}
	write(t, e.path(UserSettings), hook("user"))
	write(t, e.path(ProjectSettings), hook("project"))
	write(t, e.path(PolicySettings), hook("managed"))
	o.Flag = `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"flag"},{"type":"http","url":"http://127.0.0.1:1/x"}]}]}}`
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, m := range s.Hooks["PreToolUse"] {
		for _, h := range m.Hooks {
			cmds = append(cmds, h.Command+"@"+string(m.Source))
			if m.Matcher != "Bash" || h.Type != "command" || h.Timeout != 5 {
				t.Errorf("%+v %+v", m, h)
			}
		}
	}
	if strings.Join(cmds, " ") != "user@userSettings project@projectSettings managed@policySettings" {
		t.Errorf("hooks %q", cmds)
	}
	stop := s.Hooks["Stop"]
	if len(stop) != 1 || len(stop[0].Hooks) != 2 || stop[0].Hooks[1].Type != "http" ||
		stop[0].Hooks[1].URL != "http://127.0.0.1:1/x" || !strings.Contains(string(stop[0].Hooks[1].Raw), `"url"`) {
		t.Errorf("stop hooks %+v", stop)
	}
	var dirs []string
	for _, d := range s.Permissions.AdditionalDirectories {
		dirs = append(dirs, d.Path)
	}
	want := []string{filepath.Join(filepath.Dir(e.cwd), "shared"), filepath.Join(e.home, "notes"), "/abs"}
	if !reflect.DeepEqual(dirs, want) {
		t.Errorf("dirs %q, want %q", dirs, want)
	}
}

func TestDisableHooks(t *testing.T) {
	e := newEnv(t)
	h := `"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}`
	write(t, e.path(UserSettings), `{`+h+`}`)
	write(t, e.path(PolicySettings), `{`+h+`}`)
	write(t, e.path(LocalSettings), `{"disableAllHooks":true}`)
	s, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !s.DisableAllHooks || len(s.Hooks["Stop"]) != 1 || s.Hooks["Stop"][0].Source != PolicySettings {
		t.Errorf("user disable: %+v", s.Hooks)
	}
	write(t, e.path(LocalSettings), `{}`)
	write(t, e.path(PolicySettings), `{"allowManagedHooksOnly":true,`+h+`}`)
	if s, _ = Load(e.opts()); len(s.Hooks["Stop"]) != 1 || s.Hooks["Stop"][0].Source != PolicySettings {
		t.Errorf("managed only: %+v", s.Hooks)
	}
	write(t, e.path(PolicySettings), `{"disableAllHooks":true,`+h+`}`)
	if s, _ = Load(e.opts()); len(s.Hooks) != 0 {
		t.Errorf("policy disable: %+v", s.Hooks)
	}
}

func TestUnknownFieldsKeptAndWarnings(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"$schema":"https://json.schemastore.org/claude-code-settings.json",
		"statusLine":{"type":"command","command":"x"},
		"permissions":{"allow":[],"disableBypassPermissionsMode":"disable","defaultMode":"bypassPermissions"},
		"hooks":{"PreToolUze":[{"hooks":[{"type":"command","command":"x"}]}]}}`)
	write(t, e.path(LocalSettings), `{"permissions":{"defaultMode":"manual"}}`)
	s, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Extra) != 2 || len(s.Permissions.Extra) != 0 || s.Permissions.DisableBypassPermissionsMode == nil {
		t.Errorf("extra %v, permissions extra %v, disable bypass %v", s.Extra, s.Permissions.Extra, s.Permissions.DisableBypassPermissionsMode)
	}
	if s.Permissions.DefaultMode != "default" || s.Permissions.DefaultModeSource != LocalSettings {
		t.Errorf("mode %q from %q", s.Permissions.DefaultMode, s.Permissions.DefaultModeSource)
	}
	if len(s.Warnings) != 2 || !strings.Contains(s.Warnings[0], "hooks.PreToolUze: unknown hook event") ||
		!strings.Contains(s.Warnings[1], `.claude/settings.json: permissions.defaultMode "bypassPermissions" ignored`) {
		t.Errorf("warnings %q", s.Warnings)
	}
	// a project's escalating mode is dropped even without a local override
	os.Remove(e.path(LocalSettings))
	if s, _ = Load(e.opts()); s.Permissions.DefaultMode != "" {
		t.Errorf("mode %q", s.Permissions.DefaultMode)
	}
}

// TestLocalFileCannotEscalate: a cloned repository can commit
// .claude/settings.local.json as easily as .claude/settings.json, so the
// trust filter applies to both; the user's own file still can escalate.
func TestLocalFileCannotEscalate(t *testing.T) {
	for _, mode := range []string{"bypassPermissions", "acceptEdits", "auto"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path(LocalSettings), `{"permissions":{"defaultMode":"`+mode+`"}}`)
			s, err := Load(e.opts())
			if err != nil {
				t.Fatal(err)
			}
			if s.Permissions.DefaultMode != "" {
				t.Errorf("local file set mode %q", s.Permissions.DefaultMode)
			}
			if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "settings.local.json: permissions.defaultMode") {
				t.Errorf("warnings %q", s.Warnings)
			}
			write(t, e.path(UserSettings), `{"permissions":{"defaultMode":"`+mode+`"}}`)
			if s, _ = Load(e.opts()); s.Permissions.DefaultMode != mode || s.Permissions.DefaultModeSource != UserSettings {
				t.Errorf("user file: mode %q from %q", s.Permissions.DefaultMode, s.Permissions.DefaultModeSource)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	cases := []struct {
		src  Source
		body string
		want string
	}{
		{ProjectSettings, `{"permissions":{"allow":["Bash","Read",3]}}`,
			".claude/settings.json: permissions.allow[2]: want a string, got number"},
		{LocalSettings, "{\n  \"model\": \"x\",\n}",
			".claude/settings.local.json: invalid JSON at line 3, column 1: invalid character '}' looking for beginning of object key string"},
		{ProjectSettings, `{"model": "x"`, ".claude/settings.json: invalid JSON at line 1, column 13: unexpected end of input"},
		{ProjectSettings, `{"model": "x"} {}`, ".claude/settings.json: invalid JSON at line 1, column 16: invalid character '{' after top-level value"},
		{ProjectSettings, `["Bash"]`, ".claude/settings.json: want a JSON object, got array"},
		{LocalSettings, `{"model":true}`, ".claude/settings.local.json: model: want a string, got boolean"},
		{ProjectSettings, `{"permissions":"all"}`, ".claude/settings.json: permissions: want an object, got string"},
		{ProjectSettings, `{"permissions":{"deny":"Bash"}}`, ".claude/settings.json: permissions.deny: want an array of strings, got string"},
		{ProjectSettings, `{"permissions":{"ask":["Bash(git push"]}}`,
			`.claude/settings.json: permissions.ask[0]: malformed rule "Bash(git push": missing ")"`},
		{ProjectSettings, `{"permissions":{"allow":[""]}}`, ".claude/settings.json: permissions.allow[0]: want a rule, got an empty string"},
		{ProjectSettings, `{"permissions":{"defaultMode":"yolo"}}`,
			`.claude/settings.json: permissions.defaultMode: unknown permission mode "yolo" (want default, acceptEdits, bypassPermissions, plan, dontAsk or auto)`},
		{ProjectSettings, `{"permissions":{"additionalDirectories":[null]}}`,
			".claude/settings.json: permissions.additionalDirectories[0]: want a string, got null"},
		{ProjectSettings, `{"env":{"A":"1","B":2}}`, ".claude/settings.json: env.B: want a string, got number"},
		{ProjectSettings, `{"env":["A=1"]}`, ".claude/settings.json: env: want an object, got array"},
		{ProjectSettings, `{"hooks":{"Stop":{"hooks":[]}}}`, ".claude/settings.json: hooks.Stop: want an array of matchers, got object"},
		{ProjectSettings, `{"hooks":{"Stop":[{"matcher":"x"}]}}`, ".claude/settings.json: hooks.Stop[0].hooks: missing: want an array of hooks"},
		{ProjectSettings, `{"hooks":{"Stop":[{"matcher":1,"hooks":[]}]}}`, ".claude/settings.json: hooks.Stop[0].matcher: want a string, got number"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].command: missing: a command hook needs a command"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"command":"x"}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].type: missing: want one of command, prompt, agent, http, mcp_tool"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"shell","command":"x"}]}]}}`,
			`.claude/settings.json: hooks.Stop[0].hooks[0].type: unknown hook type "shell" (want one of command, prompt, agent, http, mcp_tool)`},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":"5"}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].timeout: want a number of seconds, got string"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":0}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].timeout: want a positive number of seconds, got 0"},
		{ProjectSettings, `{"disableAllHooks":"yes"}`, ".claude/settings.json: disableAllHooks: want a boolean, got string"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"http"}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].url: missing: an http hook needs a url"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"ftp://x/y"}]}]}}`,
			`.claude/settings.json: hooks.Stop[0].hooks[0].url: want an http or https URL, got "ftp://x/y"`},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":" "}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].prompt: want a prompt, got an empty string"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"http://h","headers":{"A":1}}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].headers.A: want a string, got number"},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"http://h","onFailure":"retry"}]}]}}`,
			`.claude/settings.json: hooks.Stop[0].hooks[0].onFailure: want "continue" or "block", got "retry"`},
		{ProjectSettings, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","once":"yes"}]}]}}`,
			".claude/settings.json: hooks.Stop[0].hooks[0].once: want a boolean, got string"},
		{PolicySettings, `{"model":1}`, "MANAGED: model: want a string, got number"},
	}
	for _, tc := range cases {
		e := newEnv(t)
		write(t, e.path(UserSettings), `{"model":"fine"}`) // a good file is not half-applied
		write(t, e.path(tc.src), tc.body)
		s, err := Load(e.opts())
		want := strings.ReplaceAll(tc.want, "MANAGED", e.managed)
		if err == nil || err.Error() != want {
			t.Errorf("%s\n got %v\nwant %s", tc.body, err, want)
		}
		if s != nil {
			t.Errorf("%s: settings returned with an error", tc.body)
		}
	}
}

func TestMalformedSeveral(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"model":1,"permissions":{"allow":[1]}}`)
	write(t, e.path(LocalSettings), `{`)
	_, err := Load(e.opts())
	want := ".claude/settings.json: model: want a string, got number\n" +
		".claude/settings.json: permissions.allow[0]: want a string, got number\n" +
		".claude/settings.local.json: invalid JSON at line 1, column 1: unexpected end of input"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var se *Error
	if !asError(err, &se) || se.Field != "model" {
		t.Errorf("not an *Error: %#v", err)
	}
}

func asError(err error, target **Error) bool {
	type multi interface{ Unwrap() []error }
	if m, ok := err.(multi); ok {
		for _, e := range m.Unwrap() {
			if asError(e, target) {
				return true
			}
		}
		return false
	}
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func TestFlagSettings(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.cwd, "ci.json"), `{"model":"from-file"}`)
	o := e.opts()
	o.Flag = "ci.json"
	s, err := Load(o)
	if err != nil || s.Model != "from-file" || s.Files[0] != (File{FlagSettings, filepath.Join(e.cwd, "ci.json")}) {
		t.Fatalf("%v %+v", err, s)
	}
	o.Flag = `  {"model":"inline"}`
	if s, err = Load(o); err != nil || s.Model != "inline" || s.Files[0] != (File{Source: FlagSettings}) {
		t.Fatalf("%v %+v", err, s)
	}
	o.Flag = `{"model":`
	if _, err = Load(o); err == nil || err.Error() != "--settings: invalid JSON at line 1, column 9: unexpected end of input" {
		t.Errorf("inline: %v", err)
	}
	o.Flag = "missing.json"
	if _, err = Load(o); err == nil || err.Error() != "missing.json: no such file or directory" {
		t.Errorf("missing: %v", err)
	}
	write(t, filepath.Join(e.cwd, "bad.json"), `{"model":[]}`)
	o.Flag = "bad.json"
	if _, err = Load(o); err == nil || err.Error() != "bad.json: model: want a string, got array" {
		t.Errorf("bad: %v", err)
	}
}

func TestEmptyAndMissingFiles(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), " \n")
	s, err := Load(e.opts())
	if err != nil || len(s.Files) != 1 || s.Model != "" {
		t.Fatalf("%v %+v", err, s)
	}
	s, err = Load(Options{Cwd: t.TempDir(), Home: t.TempDir(), ManagedPath: "/nonexistent/managed.json"})
	if err != nil || len(s.Files) != 0 {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestConfigDirFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	write(t, filepath.Join(dir, "settings.json"), `{"model":"cfg"}`)
	s, err := Load(Options{Cwd: t.TempDir(), Home: t.TempDir(), ManagedPath: "/nonexistent"})
	if err != nil || s.Model != "cfg" {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestParseRule(t *testing.T) {
	for in, want := range map[string]RuleValue{
		"Bash":                   {ToolName: "Bash"},
		"Bash()":                 {ToolName: "Bash"},
		"Bash(*)":                {ToolName: "Bash"},
		"Bash(npm run test:*)":   {ToolName: "Bash", RuleContent: "npm run test:*"},
		"Bash(echo (hi))":        {ToolName: "Bash", RuleContent: "echo (hi)"},
		"mcp__github__get_issue": {ToolName: "mcp__github__get_issue"},
		"WebFetch(domain:x.com)": {ToolName: "WebFetch", RuleContent: "domain:x.com"},
	} {
		if got := ParseRule(in); got != want {
			t.Errorf("ParseRule(%q) = %+v, want %+v", in, got, want)
		}
		if want.RuleContent != "" && want.String() != in {
			t.Errorf("String() = %q, want %q", want.String(), in)
		}
	}
}

func TestPermissionUpdateJSON(t *testing.T) {
	wire := `{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"}`
	var u PermissionUpdate
	if err := json.Unmarshal([]byte(wire), &u); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(u)
	if string(b) != wire {
		t.Errorf("round trip %s", b)
	}
}

// Every field of the reference's hook entries is read and type-checked;
// Fields keeps the keys as written.
func TestHookEntryFields(t *testing.T) {
	e := newEnv(t)
	o := e.opts()
	o.Flag = `{"hooks":{"PreToolUse":[{"hooks":[
		{"type":"http","url":"https://h/x","headers":{"Authorization":"Bearer $T"},"allowedEnvVars":["T"],"onFailure":"block","if":"Bash(rm *)","statusMessage":"checking"},
		{"type":"prompt","prompt":"ok? $ARGUMENTS","model":"haiku","continueOnBlock":true,"timeout":9},
		{"type":"command","command":"c","args":["-a"],"shell":"bash","once":true,"async":true,"asyncRewake":true,"extra":1}]}]}}`
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := s.Hooks["PreToolUse"][0].Hooks
	for i := range hs {
		hs[i].Raw = nil
	}
	want := []Hook{
		{Type: "http", URL: "https://h/x", Headers: map[string]string{"Authorization": "Bearer $T"}, AllowedEnvVars: []string{"T"},
			OnFailure: "block", If: "Bash(rm *)", StatusMessage: "checking",
			Fields: []string{"type", "url", "headers", "allowedEnvVars", "onFailure", "if", "statusMessage"}},
		{Type: "prompt", Prompt: "ok? $ARGUMENTS", Model: "haiku", ContinueOnBlock: true, Timeout: 9,
			Fields: []string{"type", "prompt", "model", "continueOnBlock", "timeout"}},
		{Type: "command", Command: "c", Args: []string{"-a"}, Shell: "bash", Once: true, Async: true, AsyncRewake: true,
			Fields: []string{"type", "command", "args", "shell", "once", "async", "asyncRewake", "extra"}},
	}
	if !reflect.DeepEqual(hs, want) {
		t.Errorf("hooks\n got %+v\nwant %+v", hs, want)
	}
}
