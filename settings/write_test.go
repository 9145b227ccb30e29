package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const existing = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "deny": ["Read(./.env)"],
    "allow": ["Bash(ls:*)", "Read"],
    "disableBypassPermissionsMode": "disable"
  },
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]},
  "statusLine": {"type": "command", "command": "~/bin/status", "padding": 0}
}
`

func TestApplyToEachDestination(t *testing.T) {
	for _, dest := range []Source{UserSettings, ProjectSettings, LocalSettings} {
		t.Run(string(dest), func(t *testing.T) {
			e := newEnv(t)
			path := e.path(dest)
			write(t, path, existing)
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
			err := Apply(e.opts(),
				PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: dest,
					Rules: []RuleValue{{ToolName: "Bash", RuleContent: "npm test"}, {ToolName: "Read"}}},
				PermissionUpdate{Type: RemoveRules, Behavior: Allow, Destination: dest,
					Rules: []RuleValue{{ToolName: "Bash", RuleContent: "ls:*"}}},
				PermissionUpdate{Type: AddRules, Behavior: Ask, Destination: dest,
					Rules: []RuleValue{{ToolName: "Bash", RuleContent: "git push:*"}}},
				PermissionUpdate{Type: SetMode, Mode: "acceptEdits", Destination: dest},
				PermissionUpdate{Type: AddDirectories, Directories: []string{"../lib", "/data"}, Destination: dest},
				PermissionUpdate{Type: RemoveDirectories, Directories: []string{"/data"}, Destination: dest},
			)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			want := `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "deny": [
      "Read(./.env)"
    ],
    "allow": [
      "Read",
      "Bash(npm test)"
    ],
    "disableBypassPermissionsMode": "disable",
    "ask": [
      "Bash(git push:*)"
    ],
    "defaultMode": "acceptEdits",
    "additionalDirectories": [
      "../lib"
    ]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/bin/status",
    "padding": 0
  }
}
`
			if string(got) != want {
				t.Errorf("file\n%s\nwant\n%s", got, want)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", fi.Mode())
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("left behind: %v", entries)
			}
			// the result loads, and the rules carry their source
			o := e.opts()
			s, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Permissions.Allow) != 2 || s.Permissions.Allow[1].Source != dest || s.Permissions.Allow[1].Value != "Bash(npm test)" {
				t.Errorf("allow %+v", s.Permissions.Allow)
			}
		})
	}
}

func TestApplyCreatesFile(t *testing.T) {
	e := newEnv(t)
	err := Apply(e.opts(), PermissionUpdate{Type: ReplaceRules, Behavior: Deny, Destination: LocalSettings,
		Rules: []RuleValue{{ToolName: "WebFetch"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(e.path(LocalSettings))
	if string(got) != "{\n  \"permissions\": {\n    \"deny\": [\n      \"WebFetch\"\n    ]\n  }\n}\n" {
		t.Errorf("%s", got)
	}
	if err := Apply(e.opts(), PermissionUpdate{Type: ReplaceRules, Behavior: Deny, Destination: LocalSettings,
		Rules: []RuleValue{{ToolName: "Write"}, {ToolName: "Edit"}}}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(e.path(LocalSettings))
	var v struct{ Permissions struct{ Deny []string } }
	if json.Unmarshal(got, &v); strings.Join(v.Permissions.Deny, ",") != "Write,Edit" {
		t.Errorf("replace: %s", got)
	}
}

func TestApplySkipsMemoryAndBypass(t *testing.T) {
	e := newEnv(t)
	err := Apply(e.opts(),
		PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: Session, Rules: []RuleValue{{ToolName: "Bash"}}},
		PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: CLIArg, Rules: []RuleValue{{ToolName: "Bash"}}},
		PermissionUpdate{Type: SetMode, Mode: "bypassPermissions", Destination: ProjectSettings},
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, ".claude")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

func TestApplyRefusesAndLeavesFilesAlone(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), existing)
	write(t, e.path(LocalSettings), `{"permissions":{"allow":"Bash"}}`)
	good := PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: ProjectSettings, Rules: []RuleValue{{ToolName: "Write"}}}
	for _, tc := range []struct {
		update PermissionUpdate
		want   string
	}{
		{PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: LocalSettings, Rules: []RuleValue{{ToolName: "X"}}},
			".claude/settings.local.json: permissions.allow: want an array of strings, got string"},
		{PermissionUpdate{Type: "grant", Destination: ProjectSettings}, `settings: update 1: unknown update type "grant"`},
		{PermissionUpdate{Type: AddRules, Behavior: "maybe", Destination: ProjectSettings}, `settings: update 1: addRules: unknown behavior "maybe" (want allow, deny or ask)`},
		{PermissionUpdate{Type: SetMode, Mode: "yolo", Destination: ProjectSettings}, `settings: update 1: setMode: unknown permission mode "yolo" (want default, acceptEdits, bypassPermissions, plan, dontAsk or auto)`},
		{PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: "policySettings"}, `settings: update 1: addRules: unknown destination "policySettings"`},
		{PermissionUpdate{Type: AddRules, Behavior: Allow, Destination: ProjectSettings, Rules: []RuleValue{{RuleContent: "x"}}},
			`settings: update 1: addRules: malformed rule "(x)": no tool name`},
	} {
		err := Apply(e.opts(), good, tc.update)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
		if got, _ := os.ReadFile(e.path(ProjectSettings)); string(got) != existing {
			t.Errorf("project file changed by a failed Apply:\n%s", got)
		}
	}
}

func TestOptionsPath(t *testing.T) {
	e := newEnv(t)
	o := e.opts()
	for s, want := range map[Source]string{UserSettings: e.path(UserSettings), ProjectSettings: e.path(ProjectSettings),
		LocalSettings: e.path(LocalSettings), PolicySettings: e.managed} {
		if got, err := o.Path(s); err != nil || got != want {
			t.Errorf("%s: %q %v", s, got, err)
		}
	}
	if _, err := o.Path(Session); err == nil {
		t.Error("session has no file")
	}
	if DefaultManagedPath() == "" {
		t.Error("no default managed path")
	}
}

// FuzzParse feeds arbitrary bytes to the settings parser: it must never
// panic, must either accept or name the file in every error, and what it
// accepts must survive a rewrite by Apply.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{existing, `{}`, ``, `[]`, `{"permissions":{"allow":[1]}}`, `{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`,
		`{"env":{"A":"1"},"model":null}`, `{"a":1} x`, `{"permissions":{"defaultMode":"manual","additionalDirectories":["~/x"]}}`,
		"{\"\\ud800\":\"\xff\"}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, errs := parse(data, ProjectSettings, "/p/.claude/settings.json", "settings.json", "/p")
		if (l == nil) == (len(errs) == 0) {
			t.Fatalf("layer %v with errors %v", l, errs)
		}
		for _, err := range errs {
			if !strings.HasPrefix(err.Error(), "settings.json: ") {
				t.Fatalf("error without the file: %v", err)
			}
		}
		if l == nil || len(strings.TrimSpace(string(data))) == 0 {
			return
		}
		top, err := parseObject(data)
		if err != nil {
			t.Fatalf("accepted but not an object: %v", err)
		}
		u := PermissionUpdate{Type: AddRules, Behavior: Allow, Rules: []RuleValue{{ToolName: "Read"}}}
		if err := u.apply(top); err != nil {
			t.Fatal(err)
		}
		out, err := top.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := parse(out, ProjectSettings, "", "settings.json", "/p"); len(errs) > 0 {
			t.Fatalf("rewrite of %q does not parse: %v\n%s", data, errs, out)
		}
	})
}
