package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadWithPolicy loads a project file and a managed policy file with the
// given contents ("" for none).
func loadWithPolicy(t *testing.T, policy, project string) (*Settings, error) {
	t.Helper()
	root := t.TempDir()
	cwd, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	managed := filepath.Join(root, "managed-settings.json")
	for _, d := range []string{filepath.Join(cwd, ".claude"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if policy != "" {
		if err := os.WriteFile(managed, []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if project != "" {
		if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(project), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(Options{Cwd: cwd, Home: home, ConfigDir: filepath.Join(home, ".claude"), ManagedPath: managed})
}

// TestManagedParse: the managed-only keys are read from the policy file
// into Settings.Managed, and only from there.
func TestManagedParse(t *testing.T) {
	cases := []struct {
		name   string
		policy string
		want   Managed // File is ignored
	}{
		{"none", `{}`, Managed{}},
		{"switches", `{"allowManagedPermissionRulesOnly": true, "allowManagedMcpServersOnly": true,
			"disableSkillShellExecution": true, "allowManagedHooksOnly": true}`,
			Managed{Keys: []string{"allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly", "disableSkillShellExecution"},
				PermissionRulesOnly: true, MCPServersOnly: true, DisableSkillShellExecution: true, HooksOnly: true}},
		{"mcp lists", `{"allowedMcpServers": [{"serverName": "gh"}, {"serverCommand": ["npx", "srv"]}, {"serverUrl": "https://*.corp/mcp"}],
			"deniedMcpServers": []}`,
			Managed{Keys: []string{"allowedMcpServers", "deniedMcpServers"},
				AllowedMCPServers: []MCPServerEntry{{ServerName: "gh"}, {ServerCommand: []string{"npx", "srv"}}, {ServerURL: "https://*.corp/mcp"}},
				DeniedMCPServers:  []MCPServerEntry{}}},
		{"empty allowlist blocks all", `{"allowedMcpServers": []}`,
			Managed{Keys: []string{"allowedMcpServers"}, AllowedMCPServers: []MCPServerEntry{}}},
		{"strict true", `{"strictPluginOnlyCustomization": true}`,
			Managed{Keys: []string{"strictPluginOnlyCustomization"}, StrictPluginOnly: []string{"skills", "agents", "hooks", "mcp"}}},
		{"strict list", `{"strictPluginOnlyCustomization": ["mcp", "skills", "mcp"]}`,
			Managed{Keys: []string{"strictPluginOnlyCustomization"}, StrictPluginOnly: []string{"mcp", "skills"}}},
		{"strict false", `{"strictPluginOnlyCustomization": false}`,
			Managed{Keys: []string{"strictPluginOnlyCustomization"}}},
		{"models", `{"availableModels": ["Opus", "claude-sonnet-4"], "availableModelsMatch": "exact", "deniedModels": ["haiku"]}`,
			Managed{Keys: []string{"availableModels", "availableModelsMatch", "deniedModels"},
				AvailableModels: []string{"opus", "claude-sonnet-4"}, AvailableModelsMatch: "exact", DeniedModels: []string{"haiku"}}},
		{"unsupported", `{"forceLoginMethod": "console", "blockedMarketplaces": [], "forceLoginOrgUUID": "x",
			"policyHelper": {"path": "/usr/bin/policy"}, "wslInheritsWindowsSettings": false, "allowedProviders": ["bedrock"]}`,
			Managed{Keys: []string{"forceLoginMethod", "blockedMarketplaces", "forceLoginOrgUUID", "policyHelper", "wslInheritsWindowsSettings", "allowedProviders"},
				Unsupported: []string{"forceLoginMethod", "forceLoginOrgUUID", "policyHelper", "allowedProviders"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := loadWithPolicy(t, c.policy, "")
			if err != nil {
				t.Fatal(err)
			}
			got := s.Managed
			got.File = ""
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Managed (-want +got):\n%s", d)
			}
			for _, k := range ManagedKeys() {
				if _, ok := s.Extra[k]; ok {
					t.Errorf("Extra holds the managed key %s", k)
				}
			}
		})
	}
}

// TestManagedOnlyFromPolicy: a project file that sets the managed keys
// sets nothing, with a warning naming each key.
func TestManagedOnlyFromPolicy(t *testing.T) {
	s, err := loadWithPolicy(t, "", `{"allowedMcpServers": [{"serverName": "x"}], "availableModels": ["opus"],
		"allowManagedPermissionRulesOnly": false, "forceLoginMethod": "console"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Managed{}, s.Managed); d != "" {
		t.Errorf("Managed from a project file (-want +got):\n%s", d)
	}
	for _, k := range []string{"allowedMcpServers", "availableModels", "allowManagedPermissionRulesOnly", "forceLoginMethod"} {
		found := false
		for _, w := range s.Warnings {
			found = found || strings.Contains(w, k+" ignored: only the managed policy")
		}
		if !found {
			t.Errorf("no warning for %s in %q", k, s.Warnings)
		}
	}
}

// TestManagedMalformed: a malformed managed key fails the load (fail
// closed), naming the field.
func TestManagedMalformed(t *testing.T) {
	cases := map[string]string{
		`{"allowedMcpServers": {"serverName": "x"}}`:                            "allowedMcpServers: want an array of server entries",
		`{"deniedMcpServers": [{"serverName": "x", "serverUrl": "https://a"}]}`: "deniedMcpServers[0]: want exactly one",
		`{"deniedMcpServers": [{"name": "x"}]}`:                                 "deniedMcpServers[0].name: unknown field",
		`{"strictPluginOnlyCustomization": ["commands"]}`:                       `unknown surface "commands"`,
		`{"availableModels": "opus"}`:                                           "availableModels: want an array of strings",
		`{"availableModelsMatch": "regex"}`:                                     `availableModelsMatch: want "prefix" or "exact"`,
		`{"disableSkillShellExecution": "yes"}`:                                 "disableSkillShellExecution: want a boolean",
	}
	for policy, want := range cases {
		_, err := loadWithPolicy(t, policy, "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("policy %s: err = %v, want it to contain %q", policy, err, want)
		}
	}
}

// TestManagedMCPServerBlocked matches servers against the lists.
func TestManagedMCPServerBlocked(t *testing.T) {
	stdio := func(name string, cmd ...string) MCPServer { return MCPServer{Name: name, Command: cmd} }
	remote := func(name, url string) MCPServer { return MCPServer{Name: name, URL: url} }
	byName := Managed{AllowedMCPServers: []MCPServerEntry{{ServerName: "gh"}}}
	byCmd := Managed{AllowedMCPServers: []MCPServerEntry{{ServerName: "gh"}, {ServerCommand: []string{"npx", "srv"}}}}
	byURL := Managed{AllowedMCPServers: []MCPServerEntry{{ServerName: "gh"}, {ServerURL: "https://*.corp.example/mcp"}}}
	deny := Managed{AllowedMCPServers: []MCPServerEntry{{ServerName: "gh"}},
		DeniedMCPServers: []MCPServerEntry{{ServerName: "gh"}, {ServerCommand: []string{"evil"}}, {ServerURL: "http://*"}}}
	cases := []struct {
		name string
		m    *Managed
		s    MCPServer
		want string
	}{
		{"nil policy", nil, stdio("x", "a"), ""},
		{"no lists", &Managed{}, stdio("x", "a"), ""},
		{"only flag, no allowlist", &Managed{MCPServersOnly: true}, stdio("x", "a"), "allowManagedMcpServersOnly"},
		{"empty allowlist", &Managed{AllowedMCPServers: []MCPServerEntry{}}, stdio("gh", "a"), "allowedMcpServers"},
		{"name listed", &byName, stdio("gh", "anything"), ""},
		{"name not listed", &byName, stdio("other", "anything"), "allowedMcpServers"},
		{"sdk by name", &byCmd, MCPServer{Name: "gh"}, ""},
		{"command listed", &byCmd, stdio("whatever", "npx", "srv"), ""},
		{"command args differ", &byCmd, stdio("whatever", "npx", "srv", "--x"), "allowedMcpServers"},
		{"stdio name not enough with command entries", &byCmd, stdio("gh", "other"), "allowedMcpServers"},
		{"remote by name with command entries", &byCmd, remote("gh", "https://x"), ""},
		{"url pattern", &byURL, remote("r", "https://a.corp.example/mcp"), ""},
		{"url pattern miss", &byURL, remote("r", "https://a.corp.example/mcp2"), "allowedMcpServers"},
		{"remote name not enough with url entries", &byURL, remote("gh", "https://elsewhere/mcp"), "allowedMcpServers"},
		{"deny wins by name", &deny, stdio("gh", "x"), "deniedMcpServers"},
		{"deny by command", &deny, stdio("ok", "evil"), "deniedMcpServers"},
		{"deny by url", &deny, remote("ok", "http://plain/mcp"), "deniedMcpServers"},
		{"deny only", &Managed{DeniedMCPServers: []MCPServerEntry{{ServerName: "bad"}}}, stdio("good", "x"), ""},
	}
	for _, c := range cases {
		if got := c.m.MCPServerBlocked(c.s); got != c.want {
			t.Errorf("%s: MCPServerBlocked(%+v) = %q, want %q", c.name, c.s, got, c.want)
		}
	}
}

func TestURLPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, url string
		want         bool
	}{
		{"https://a/mcp", "https://a/mcp", true},
		{"https://a/mcp", "https://a/mcp/", false},
		{"https://*", "https://anything/at/all", true},
		{"https://*.corp/*", "https://x.corp/mcp", true},
		{"https://*.corp/*", "https://x.corp.evil/mcp", false},
		{"*://x/*", "http://x/y", true},
		{"https://a*a", "https://a", false},
		{"*", "", true},
	}
	for _, c := range cases {
		if got := URLPatternMatch(c.pattern, c.url); got != c.want {
			t.Errorf("URLPatternMatch(%q, %q) = %v, want %v", c.pattern, c.url, got, c.want)
		}
	}
}

// TestManagedModelBlocked matches models against availableModels and
// deniedModels.
func TestManagedModelBlocked(t *testing.T) {
	avail := Managed{AvailableModels: []string{"claude-opus-4", "sonnet"}}
	exact := Managed{AvailableModels: []string{"claude-opus-4-1-20250805"}, AvailableModelsMatch: "exact"}
	denied := Managed{DeniedModels: []string{"haiku", "claude-opus-4-1"}}
	cases := []struct {
		name  string
		m     *Managed
		model string
		want  string
	}{
		{"nil", nil, "claude-opus-4-1-20250805", ""},
		{"no lists", &Managed{}, "claude-opus-4-1-20250805", ""},
		{"empty allowlist", &Managed{AvailableModels: []string{}}, "claude-sonnet-4-5", "availableModels"},
		{"prefix", &avail, "claude-opus-4-1-20250805", ""},
		{"prefix equal", &avail, "claude-opus-4", ""},
		{"prefix at boundary only", &avail, "claude-opus-40", "availableModels"},
		{"family", &avail, "claude-sonnet-4-5-20250929", ""},
		{"old family naming", &avail, "claude-3-5-sonnet-20241022", ""},
		{"unlisted", &avail, "claude-haiku-4-5", "availableModels"},
		{"platform id", &avail, "us.anthropic.claude-opus-4-1-20250805-v1:0", ""},
		{"vertex id", &avail, "claude-opus-4-1@20250805", ""},
		{"case", &avail, "Claude-Opus-4-1", ""},
		{"exact", &exact, "claude-opus-4-1-20250805", ""},
		{"exact no prefix", &exact, "claude-opus-4-1-20250805-x", "availableModels"},
		{"denied family", &denied, "claude-haiku-4-5", "deniedModels"},
		{"denied prefix", &denied, "claude-opus-4-1-20250805", "deniedModels"},
		{"not denied", &denied, "claude-opus-4-5", ""},
		{"deny wins", &Managed{AvailableModels: []string{"opus"}, DeniedModels: []string{"opus"}}, "claude-opus-4-5", "deniedModels"},
	}
	for _, c := range cases {
		if got := c.m.ModelBlocked(c.model); got != c.want {
			t.Errorf("%s: ModelBlocked(%q) = %q, want %q", c.name, c.model, got, c.want)
		}
	}
}
