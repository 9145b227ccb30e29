package settings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSandboxMerge: booleans from the highest source that sets them,
// lists from all, paths made absolute by their prefix.
func TestSandboxMerge(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(UserSettings), `{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false,
		"excludedCommands": ["docker"],
		"filesystem": {"allowWrite": ["~/.kube", "//tmp/build", "/var/cache/x"], "denyRead": ["secrets"]},
		"network": {"allowedDomains": ["example.com"], "allowLocalBinding": true}}}`)
	write(t, e.path(ProjectSettings), `{"sandbox": {"failIfUnavailable": true, "excludedCommands": ["git"],
		"filesystem": {"denyWrite": ["./.env"]},
		"network": {"allowedDomains": ["*.github.com"], "deniedDomains": ["evil.example.com"]}}}`)
	s, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := Sandbox{
		Enabled: true, EnabledSource: UserSettings, FailIfUnavailable: true, AutoAllowBashIfSandboxed: false,
		AllowUnsandboxedCommands: true, ExcludedCommands: []string{"docker", "git"},
		Filesystem: SandboxFilesystem{
			AllowWrite: []string{filepath.Join(e.home, ".kube"), "/tmp/build", "/var/cache/x"},
			DenyRead:   []string{filepath.Join(e.home, ".claude", "secrets")},
			DenyWrite:  []string{filepath.Join(e.cwd, ".env")},
		},
		Network: SandboxNetwork{AllowedDomains: []string{"example.com", "*.github.com"},
			AllowedDomainSources: []Source{UserSettings, ProjectSettings},
			DeniedDomains:        []string{"evil.example.com"}, AllowLocalBinding: true},
	}
	if diff := cmp.Diff(want, s.Sandbox); diff != "" {
		t.Errorf("Sandbox (-want +got):\n%s", diff)
	}
}

// TestSandboxDefaults: with no sandbox object the sandbox is off and the
// reference's defaults hold.
func TestSandboxDefaults(t *testing.T) {
	s, err := Load(newEnv(t).opts())
	if err != nil {
		t.Fatal(err)
	}
	want := Sandbox{AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: true}
	if diff := cmp.Diff(want, s.Sandbox); diff != "" {
		t.Errorf("Sandbox (-want +got):\n%s", diff)
	}
}

// TestSandboxEnabledTriState: sandbox.enabled is unset, true or false,
// from the highest source that sets it; a lower source's value never
// shows through a higher one's, and a source that does not set it leaves
// the lower one's.
func TestSandboxEnabledTriState(t *testing.T) {
	tests := []struct {
		name     string
		files    map[Source]string
		flag     string
		enabled  bool
		source   Source
		disabled bool
		warning  string // a warning that must be given
	}{
		{name: "unset"},
		{name: "object without enabled", files: map[Source]string{ProjectSettings: `{"sandbox": {"excludedCommands": ["git"]}}`}},
		{name: "null enabled is unset", files: map[Source]string{UserSettings: `{"sandbox": {"enabled": null}}`}},
		{name: "user off", files: map[Source]string{UserSettings: `{"sandbox": {"enabled": false}}`},
			source: UserSettings, disabled: true},
		{name: "project may not turn off", files: map[Source]string{
			UserSettings: `{"sandbox": {"enabled": true}}`, ProjectSettings: `{"sandbox": {"enabled": false}}`},
			enabled: true, source: UserSettings, warning: ".claude/settings.json: sandbox.enabled false ignored"},
		{name: "local may not turn the default off", files: map[Source]string{LocalSettings: `{"sandbox": {"enabled": false}}`},
			warning: ".claude/settings.local.json: sandbox.enabled false ignored"},
		{name: "local on over project off", files: map[Source]string{
			ProjectSettings: `{"sandbox": {"enabled": false}}`, LocalSettings: `{"sandbox": {"enabled": true}}`},
			enabled: true, source: LocalSettings},
		{name: "local without enabled keeps user off", files: map[Source]string{
			UserSettings: `{"sandbox": {"enabled": false}}`, LocalSettings: `{"sandbox": {"filesystem": {"allowWrite": ["/x"]}}}`},
			source: UserSettings, disabled: true},
		{name: "inline off over local on", files: map[Source]string{LocalSettings: `{"sandbox": {"enabled": true}}`},
			flag: `{"sandbox": {"enabled": false}}`, source: FlagSettings, disabled: true},
		{name: "managed on over repository off", files: map[Source]string{
			ProjectSettings: `{"sandbox": {"enabled": false}}`, LocalSettings: `{"sandbox": {"enabled": false}}`,
			PolicySettings: `{"sandbox": {"enabled": true}}`},
			flag: `{"sandbox": {"enabled": false}}`, enabled: true, source: PolicySettings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for src, body := range tt.files {
				write(t, e.path(src), body)
			}
			o := e.opts()
			o.Flag = tt.flag
			s, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Sandbox
			if got.Enabled != tt.enabled || got.EnabledSource != tt.source || got.Disabled() != tt.disabled {
				t.Errorf("Enabled %v, EnabledSource %q, Disabled %v; want %v, %q, %v",
					got.Enabled, got.EnabledSource, got.Disabled(), tt.enabled, tt.source, tt.disabled)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(s.Warnings, "\n"), tt.warning) {
				t.Errorf("warnings %q lack %q", s.Warnings, tt.warning)
			}
		})
	}
}

// TestSandboxErrors: a malformed sandbox object fails the load, naming
// the file and the field.
func TestSandboxErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"sandbox": true}`, ".claude/settings.json: sandbox: want an object, got boolean"},
		{`{"sandbox": {"enabled": "yes"}}`, ".claude/settings.json: sandbox.enabled: want a boolean, got string"},
		{`{"sandbox": {"excludedCommands": "git"}}`, ".claude/settings.json: sandbox.excludedCommands: want an array of strings, got string"},
		{`{"sandbox": {"filesystem": {"allowWrite": [""]}}}`, ".claude/settings.json: sandbox.filesystem.allowWrite[0]: want a path, got an empty string"},
		{`{"sandbox": {"filesystem": []}}`, ".claude/settings.json: sandbox.filesystem: want an object, got array"},
		{`{"sandbox": {"network": {"allowedDomains": ["https://x.com"]}}}`, `.claude/settings.json: sandbox.network.allowedDomains[0]: want a domain such as example.com or *.example.com, got "https://x.com"`},
		{`{"sandbox": {"network": {"allowedDomains": ["a.*.com"]}}}`, `.claude/settings.json: sandbox.network.allowedDomains[0]: a wildcard may only start a domain (*.example.com), got "a.*.com"`},
		{`{"sandbox": {"network": {"allowLocalBinding": 1}}}`, ".claude/settings.json: sandbox.network.allowLocalBinding: want a boolean, got number"},
	}
	for _, tt := range tests {
		e := newEnv(t)
		write(t, e.path(ProjectSettings), tt.body)
		_, err := Load(e.opts())
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.body, err, tt.want)
		}
	}
}

// TestSandboxUnsupported: keys agentloop does not enforce are reported,
// never silently dropped.
func TestSandboxUnsupported(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"sandbox": {"enabled": true, "bwrapPath": "/usr/bin/bwrap",
		"network": {"tlsTerminate": {}, "allowUnixSockets": ["/run/x.sock"]},
		"filesystem": {"disabled": false}, "mystery": 1}}`)
	s, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".claude/settings.json: sandbox.bwrapPath",
		".claude/settings.json: sandbox.network.tlsTerminate",
		".claude/settings.json: sandbox.network.allowUnixSockets",
		".claude/settings.json: sandbox.filesystem.disabled",
	}
	if diff := cmp.Diff(want, s.Sandbox.Unsupported); diff != "" {
		t.Errorf("Unsupported (-want +got):\n%s", diff)
	}
	joined := strings.Join(s.Warnings, "\n")
	for _, w := range append(want, ".claude/settings.json: sandbox.mystery: unknown sandbox setting") {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	if _, ok := s.Extra["sandbox"]; ok {
		t.Error("sandbox also kept as an unmodelled field")
	}
}
