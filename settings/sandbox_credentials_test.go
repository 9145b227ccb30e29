package settings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSandboxRestrictingKeys: the sandbox keys that restrict (credentials,
// allowManagedDomainsOnly, strictAllowlist, the proxy ports,
// allowManagedReadPathsOnly) are read from the sources that may set them,
// and an administrator's strict settings drop the loosening entries of
// the files a repository can ship, each time with a warning.
func TestSandboxRestrictingKeys(t *testing.T) {
	base := func(f func(e env, s *Sandbox)) func(e env) Sandbox {
		return func(e env) Sandbox {
			s := Sandbox{AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: true}
			f(e, &s)
			return s
		}
	}
	tests := []struct {
		name     string
		files    map[Source]string
		want     func(e env) Sandbox
		warnings []string
	}{
		{
			name: "credentials from every source, paths resolved like filesystem paths",
			files: map[Source]string{
				UserSettings: `{"sandbox": {"credentials": {"files": [{"path": "~/.aws/credentials", "mode": "deny"},
					{"path": "tokens", "mode": "mask", "extract": "x", "injectHosts": ["a.com"]}],
					"envVars": [{"name": "GITHUB_TOKEN", "mode": "mask", "decode": "base64"}]}}}`,
				ProjectSettings: `{"sandbox": {"credentials": {"files": [{"path": ".env"}], "envVars": [{"name": "NPM_TOKEN", "mode": "deny"}]}}}`,
				PolicySettings:  `{"sandbox": {"credentials": {"files": [{"path": "//etc/secret"}]}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Credentials = SandboxCredentials{
					Files: []CredentialFile{
						{Path: filepath.Join(e.home, ".aws", "credentials"), Mode: "deny", Source: UserSettings},
						{Path: filepath.Join(e.home, ".claude", "tokens"), Mode: "mask", Source: UserSettings},
						{Path: filepath.Join(e.cwd, ".env"), Mode: "deny", Source: ProjectSettings},
						{Path: "/etc/secret", Mode: "deny", Source: PolicySettings},
					},
					EnvVars: []CredentialEnvVar{
						{Name: "GITHUB_TOKEN", Mode: "mask", Source: UserSettings},
						{Name: "NPM_TOKEN", Mode: "deny", Source: ProjectSettings},
					},
				}
			}),
		},
		{
			name: "credentials keys that cannot be honoured are listed",
			files: map[Source]string{
				PolicySettings: `{"sandbox": {"credentials": {"awsPairs": [], "sigv4": {"streaming": true}, "allowPlaintextInject": true}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Credentials.Refused = []string{e.managed + ": sandbox.credentials.awsPairs", e.managed + ": sandbox.credentials.sigv4"}
			}),
			warnings: []string{"sandbox.credentials.allowPlaintextInject has no effect"},
		},
		{
			name: "allowManagedDomainsOnly keeps the managed domains, all denied domains",
			files: map[Source]string{
				UserSettings:    `{"sandbox": {"network": {"allowedDomains": ["user.example"], "deniedDomains": ["bad.example"]}}}`,
				ProjectSettings: `{"sandbox": {"network": {"allowedDomains": ["repo.example"]}}}`,
				PolicySettings:  `{"sandbox": {"network": {"allowManagedDomainsOnly": true, "allowedDomains": ["corp.example"]}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{AllowManagedDomainsOnly: true, AllowedDomains: []string{"corp.example"},
					AllowedDomainSources: []Source{PolicySettings}, DeniedDomains: []string{"bad.example"}}
			}),
			warnings: []string{
				"~/.claude/settings.json: sandbox.network.allowedDomains ignored: the managed policy sets sandbox.network.allowManagedDomainsOnly",
				".claude/settings.json: sandbox.network.allowedDomains ignored",
			},
		},
		{
			name: "allowManagedDomainsOnly from the user is ignored",
			files: map[Source]string{
				UserSettings: `{"sandbox": {"network": {"allowManagedDomainsOnly": true, "allowedDomains": ["user.example"]},
					"filesystem": {"allowManagedReadPathsOnly": true}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{AllowedDomains: []string{"user.example"}, AllowedDomainSources: []Source{UserSettings}}
			}),
			warnings: []string{
				"~/.claude/settings.json: sandbox.network.allowManagedDomainsOnly ignored: only the managed policy may set it",
				"~/.claude/settings.json: sandbox.filesystem.allowManagedReadPathsOnly ignored: only the managed policy may set it",
			},
		},
		{
			name: "strictAllowlist from the user drops the repository's domains",
			files: map[Source]string{
				UserSettings:    `{"sandbox": {"network": {"strictAllowlist": true, "allowedDomains": ["user.example"]}}}`,
				ProjectSettings: `{"sandbox": {"network": {"allowedDomains": ["repo.example"]}}}`,
				LocalSettings:   `{"sandbox": {"network": {"allowedDomains": ["local.example"], "strictAllowlist": false}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{StrictAllowlist: true, AllowedDomains: []string{"user.example"},
					AllowedDomainSources: []Source{UserSettings}}
			}),
			warnings: []string{
				".claude/settings.json: sandbox.network.allowedDomains ignored: sandbox.network.strictAllowlist is set",
				".claude/settings.local.json: sandbox.network.strictAllowlist ignored",
			},
		},
		{
			name: "strictAllowlist from the project is ignored",
			files: map[Source]string{
				ProjectSettings: `{"sandbox": {"network": {"strictAllowlist": true, "allowedDomains": ["repo.example"]}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{AllowedDomains: []string{"repo.example"}, AllowedDomainSources: []Source{ProjectSettings}}
			}),
			warnings: []string{".claude/settings.json: sandbox.network.strictAllowlist ignored: a file a repository can ship may not set it"},
		},
		{
			name: "proxy ports from trusted sources, never from the repository",
			files: map[Source]string{
				UserSettings:    `{"sandbox": {"network": {"httpProxyPort": 3128, "socksProxyPort": 1080}}}`,
				ProjectSettings: `{"sandbox": {"network": {"httpProxyPort": 9999, "socksProxyPort": 9998}}}`,
				FlagSettings:    `{"sandbox": {"network": {"httpProxyPort": 8080}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{HTTPProxyPort: 8080, SOCKSProxyPort: 1080}
			}),
			warnings: []string{
				".claude/settings.json: sandbox.network.httpProxyPort ignored",
				".claude/settings.json: sandbox.network.socksProxyPort ignored",
			},
		},
		{
			name: "allowManagedDomainsOnly keeps the managed proxy ports only",
			files: map[Source]string{
				UserSettings:   `{"sandbox": {"network": {"httpProxyPort": 3128}}}`,
				PolicySettings: `{"sandbox": {"network": {"allowManagedDomainsOnly": true, "socksProxyPort": 1080}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Network = SandboxNetwork{AllowManagedDomainsOnly: true, SOCKSProxyPort: 1080}
			}),
			warnings: []string{"~/.claude/settings.json: sandbox.network.httpProxyPort ignored: the managed policy sets sandbox.network.allowManagedDomainsOnly"},
		},
		{
			name: "allowManagedReadPathsOnly keeps the managed allowRead",
			files: map[Source]string{
				UserSettings:   `{"sandbox": {"filesystem": {"allowRead": ["/home/u/x"]}}}`,
				PolicySettings: `{"sandbox": {"filesystem": {"allowManagedReadPathsOnly": true, "allowRead": ["/opt/shared"]}}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.Filesystem = SandboxFilesystem{AllowManagedReadPathsOnly: true, AllowRead: []string{"/opt/shared"}}
			}),
			warnings: []string{"~/.claude/settings.json: sandbox.filesystem.allowRead ignored: the managed policy sets sandbox.filesystem.allowManagedReadPathsOnly"},
		},
		{
			name: "managed allowUnsandboxedCommands false drops the repository's loosenings",
			files: map[Source]string{
				UserSettings: `{"sandbox": {"excludedCommands": ["docker"], "filesystem": {"allowWrite": ["/u/w"], "allowRead": ["/u/r"]}}}`,
				ProjectSettings: `{"sandbox": {"excludedCommands": ["curl"], "filesystem": {"allowWrite": ["/p/w"], "allowRead": ["/p/r"],
					"denyRead": ["/p/secret"]}}}`,
				LocalSettings:  `{"sandbox": {"excludedCommands": ["wget"]}}`,
				PolicySettings: `{"sandbox": {"allowUnsandboxedCommands": false}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.AllowUnsandboxedCommands = false
				s.ExcludedCommands = []string{"docker"}
				s.Filesystem = SandboxFilesystem{AllowWrite: []string{"/u/w"}, AllowRead: []string{"/u/r"}, DenyRead: []string{"/p/secret"}}
			}),
			warnings: []string{
				".claude/settings.json: sandbox.excludedCommands ignored: " + "%managed% sets sandbox.allowUnsandboxedCommands false",
				".claude/settings.json: sandbox.filesystem.allowWrite ignored",
				".claude/settings.json: sandbox.filesystem.allowRead ignored",
				".claude/settings.local.json: sandbox.excludedCommands ignored",
			},
		},
		{
			name: "--settings allowUnsandboxedCommands false drops them too",
			files: map[Source]string{
				ProjectSettings: `{"sandbox": {"excludedCommands": ["curl"]}}`,
				FlagSettings:    `{"sandbox": {"allowUnsandboxedCommands": false}}`,
			},
			want:     base(func(e env, s *Sandbox) { s.AllowUnsandboxedCommands = false }),
			warnings: []string{".claude/settings.json: sandbox.excludedCommands ignored"},
		},
		{
			name: "managed allowManagedDomainsOnly drops them too",
			files: map[Source]string{
				LocalSettings:  `{"sandbox": {"filesystem": {"allowWrite": ["/l/w"]}}}`,
				PolicySettings: `{"sandbox": {"network": {"allowManagedDomainsOnly": true}}}`,
			},
			want:     base(func(e env, s *Sandbox) { s.Network.AllowManagedDomainsOnly = true }),
			warnings: []string{".claude/settings.local.json: sandbox.filesystem.allowWrite ignored"},
		},
		{
			name: "user allowUnsandboxedCommands false leaves the repository's entries",
			files: map[Source]string{
				UserSettings:    `{"sandbox": {"allowUnsandboxedCommands": false}}`,
				ProjectSettings: `{"sandbox": {"excludedCommands": ["curl"]}}`,
			},
			want: base(func(e env, s *Sandbox) {
				s.AllowUnsandboxedCommands = false
				s.ExcludedCommands = []string{"curl"}
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			for src, body := range tt.files {
				if src == FlagSettings {
					o.Flag = body
					continue
				}
				write(t, e.path(src), body)
			}
			s, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want(e), s.Sandbox); diff != "" {
				t.Errorf("Sandbox (-want +got):\n%s", diff)
			}
			joined := strings.Join(s.Warnings, "\n")
			for _, w := range tt.warnings {
				w = strings.ReplaceAll(w, "%managed%", e.managed)
				if !strings.Contains(joined, w) {
					t.Errorf("warnings lack %q:\n%s", w, joined)
				}
			}
		})
	}
}

// TestSandboxNetworkAllowsFrom: which sources' allowed domains and
// WebFetch allow rules count.
func TestSandboxNetworkAllowsFrom(t *testing.T) {
	srcs := []Source{UserSettings, ProjectSettings, LocalSettings, FlagSettings, PolicySettings, Session, CLIArg}
	tests := []struct {
		name string
		n    SandboxNetwork
		want []Source
	}{
		{"default", SandboxNetwork{}, srcs},
		{"strict", SandboxNetwork{StrictAllowlist: true}, []Source{UserSettings, FlagSettings, PolicySettings, Session, CLIArg}},
		{"managed only", SandboxNetwork{AllowManagedDomainsOnly: true, StrictAllowlist: true}, []Source{PolicySettings}},
	}
	for _, tt := range tests {
		var got []Source
		for _, s := range srcs {
			if tt.n.AllowsFrom(s) {
				got = append(got, s)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestSandboxCredentialErrors: a malformed credentials entry fails the
// load, naming the file and the field; a restriction is never dropped
// quietly.
func TestSandboxCredentialErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"sandbox": {"credentials": []}}`, ".claude/settings.json: sandbox.credentials: want an object, got array"},
		{`{"sandbox": {"credentials": {"files": {}}}}`, ".claude/settings.json: sandbox.credentials.files: want an array of objects, got object"},
		{`{"sandbox": {"credentials": {"files": [{"mode": "deny"}]}}}`, `.claude/settings.json: sandbox.credentials.files[0]: missing "path"`},
		{`{"sandbox": {"credentials": {"files": [{"path": " "}]}}}`, ".claude/settings.json: sandbox.credentials.files[0].path: want a path, got an empty string"},
		{`{"sandbox": {"credentials": {"files": [{"path": "x", "mode": "hide"}]}}}`, `.claude/settings.json: sandbox.credentials.files[0].mode: want "deny" or "mask", got "hide"`},
		{`{"sandbox": {"credentials": {"envVars": [{"name": "A=B"}]}}}`, `.claude/settings.json: sandbox.credentials.envVars[0].name: want a variable name, got "A=B"`},
		{`{"sandbox": {"credentials": {"envVars": ["TOKEN"]}}}`, ".claude/settings.json: sandbox.credentials.envVars[0]: want an object, got string"},
		{`{"sandbox": {"network": {"httpProxyPort": "3128"}}}`, ".claude/settings.json: sandbox.network.httpProxyPort: want a port number, got string"},
		{`{"sandbox": {"network": {"socksProxyPort": 70000}}}`, ".claude/settings.json: sandbox.network.socksProxyPort: want a port number from 1 to 65535, got 70000"},
		{`{"sandbox": {"network": {"strictAllowlist": "yes"}}}`, ".claude/settings.json: sandbox.network.strictAllowlist: want a boolean, got string"},
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
