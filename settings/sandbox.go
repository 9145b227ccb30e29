package settings

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Sandbox is the merged "sandbox" object of the settings files: how Bash
// commands are confined by the kernel. Booleans come from the highest
// source that sets them; lists are concatenated from all sources.
//
// sandbox.enabled has three states: unset (EnabledSource is ""), true and
// false. Unset is agentloop's default: Bash commands are sandboxed where
// the kernel can (their writes confined, the network unrestricted), and
// the settings that only apply to an explicitly enabled sandbox
// (the network rules, autoAllowBashIfSandboxed, failIfUnavailable) do
// not. True is the reference's sandbox; false turns the sandbox off
// (plan mode stays sandboxed).
//
// Who may turn it off: the user's settings, the flag or inline settings
// (Options.Sandbox) and the managed policy. A file a repository can ship
// (the project and local settings) may turn it on but not off: its
// `"enabled": false` is ignored with a warning, as its escalating
// defaultMode is (the reference, whose sandbox is off by default, lets
// them). Otherwise the highest source that sets sandbox.enabled wins
// (managed policy over flag over local over project over user).
// EnabledSource tells the host which file turned it off.
type Sandbox struct {
	// Enabled is sandbox.enabled as the highest source that sets it says:
	// true turns the reference's sandbox on for Bash commands. False
	// with EnabledSource "" is the default-on sandbox; false with a
	// source turns it off.
	Enabled bool
	// EnabledSource is the source whose sandbox.enabled Enabled holds, or
	// "" when no source sets it.
	EnabledSource Source
	// FailIfUnavailable makes a session whose settings enable the sandbox
	// fail to start where the kernel cannot sandbox, instead of warning
	// and running commands unsandboxed. It has no effect on the default
	// sandbox.
	FailIfUnavailable bool
	// AutoAllowBashIfSandboxed (default true) runs sandboxed Bash calls
	// that would otherwise be asked, when the settings enable the
	// sandbox (not with the default sandbox); deny and ask rules still
	// apply.
	AutoAllowBashIfSandboxed bool
	// AllowUnsandboxedCommands (default true) honours Bash's
	// dangerouslyDisableSandbox; such calls then need the usual
	// permission.
	AllowUnsandboxedCommands bool
	// ExcludedCommands run outside the sandbox, with the usual
	// permissions.
	ExcludedCommands []string
	Filesystem       SandboxFilesystem
	Network          SandboxNetwork
	// Credentials are the secrets sandboxed commands may not see
	// (sandbox_credentials.go).
	Credentials SandboxCredentials
	// Unsupported names the keys that were read but that agentloop's
	// sandbox does not enforce, each with the file that set it, such as
	// ".claude/settings.json: sandbox.network.tlsTerminate". They are
	// also in Settings.Warnings.
	Unsupported []string
}

// Disabled reports whether a source turned the sandbox off
// (sandbox.enabled false).
func (s *Sandbox) Disabled() bool { return s.EnabledSource != "" && !s.Enabled }

// SandboxFilesystem holds the sandbox's extra filesystem paths, absolute.
// In a settings file, "//path" and "/path" are absolute, "~/path" is in
// the home directory, and any other path is relative to the directory
// that the file's "/path" permission rules are relative to (the project
// directory for project, local and inline settings).
type SandboxFilesystem struct {
	AllowWrite, DenyWrite, DenyRead, AllowRead []string
	// AllowManagedReadPathsOnly is the managed policy's
	// filesystem.allowManagedReadPathsOnly (other sources' are ignored
	// with a warning): AllowRead then holds the policy's entries only.
	AllowManagedReadPathsOnly bool
}

// SandboxNetwork holds the domains sandboxed commands may reach through
// agentloop's proxy, and whether they may listen on TCP ports. They apply
// when the settings enable the sandbox; the default sandbox does not
// restrict the network.
//
// AllowedDomains holds only the domains that count (see AllowsFrom);
// AllowedDomainSources[i] is the source that listed AllowedDomains[i].
// DeniedDomains count from every source.
type SandboxNetwork struct {
	AllowedDomains, DeniedDomains []string
	AllowedDomainSources          []Source
	AllowLocalBinding             bool
	// AllowManagedDomainsOnly is the managed policy's
	// network.allowManagedDomainsOnly (other sources' are ignored with a
	// warning): only the policy's allowed domains and WebFetch allow
	// rules admit hosts.
	AllowManagedDomainsOnly bool
	// StrictAllowlist is network.strictAllowlist from the user's
	// settings, --settings or the managed policy (true in any of them
	// wins; the project and local files' are ignored with a warning):
	// the project and local files' allowed domains and WebFetch allow
	// rules are left out.
	StrictAllowlist bool
	// HTTPProxyPort and SOCKSProxyPort are the user's own proxy on the
	// loopback interface, for sandboxed traffic instead of agentloop's
	// proxy; 0 means unset. From the project and local files they are
	// ignored with a warning; otherwise the highest source that sets one
	// wins.
	HTTPProxyPort, SOCKSProxyPort int
}

// AllowsFrom reports whether allowed domains and WebFetch(domain:…) allow
// rules of src admit hosts for the sandbox's proxy: only the managed
// policy's under AllowManagedDomainsOnly, and none of a file a
// repository can ship under StrictAllowlist. Sources other than the
// settings files (session, cliArg) count unless AllowManagedDomainsOnly.
func (n *SandboxNetwork) AllowsFrom(src Source) bool {
	switch {
	case n.AllowManagedDomainsOnly:
		return src == PolicySettings
	case n.StrictAllowlist:
		return !repoShipped(src)
	}
	return true
}

// sandboxLayer is the sandbox object of one file.
type sandboxLayer struct {
	enabled, failIfUnavailable, autoAllow, allowUnsandboxed, allowLocalBinding *bool
	excluded                                                                   []string
	allowWrite, denyWrite, denyRead, allowRead                                 []string
	allowedDomains, deniedDomains                                              []string
	unsupported                                                                []string
	// sandbox_credentials.go
	strict, managedDomainsOnly, managedReadOnly *bool
	httpPort, socksPort                         *int
	credFiles                                   []CredentialFile
	credEnv                                     []CredentialEnvVar
	credRefused                                 []string
}

// sandboxUnsupported returns the reference's sandbox keys that agentloop
// reads but does not enforce, of one object.
func sandboxUnsupported(object string) []string {
	switch object {
	case "sandbox":
		return []string{"ignoreViolations", "enableWeakerNestedSandbox", "allowNestedUserNamespaces",
			"enableWeakerNetworkIsolation", "allowAppleEvents", "ripgrep", "bwrapPath", "socatPath"}
	case "sandbox.network":
		return []string{"allowUnixSockets", "allowAllUnixSockets", "allowMachLookup", "tlsTerminate"}
	case "sandbox.filesystem":
		return []string{"disabled"}
	}
	return nil
}

func (l *layer) readSandbox(c *checker, raw json.RawMessage) {
	o := c.object("sandbox", raw)
	if o == nil {
		return
	}
	sb := &sandboxLayer{}
	l.sandbox = sb
	flag := func(field string, v json.RawMessage, dst **bool) {
		if b, ok := c.boolean(field, v); ok {
			*dst = &b
		}
	}
	paths := func(field string, v json.RawMessage) []string {
		return c.strs(field, v, func(s string) string {
			if strings.TrimSpace(s) == "" {
				return "want a path, got an empty string"
			}
			return ""
		})
	}
	for _, key := range o.keys {
		v := o.vals[key]
		if isNull(v) {
			continue
		}
		field := "sandbox." + key
		switch key {
		case "enabled":
			flag(field, v, &sb.enabled)
		case "failIfUnavailable":
			flag(field, v, &sb.failIfUnavailable)
		case "autoAllowBashIfSandboxed":
			flag(field, v, &sb.autoAllow)
		case "allowUnsandboxedCommands":
			flag(field, v, &sb.allowUnsandboxed)
		case "excludedCommands":
			sb.excluded = c.strs(field, v, func(s string) string {
				if strings.TrimSpace(s) == "" {
					return "want a command, got an empty string"
				}
				return ""
			})
		case "filesystem":
			fo := c.object(field, v)
			if fo == nil {
				continue
			}
			for _, k := range fo.keys {
				fv := fo.vals[k]
				if isNull(fv) {
					continue
				}
				f := field + "." + k
				switch k {
				case "allowWrite":
					sb.allowWrite = paths(f, fv)
				case "denyWrite":
					sb.denyWrite = paths(f, fv)
				case "denyRead":
					sb.denyRead = paths(f, fv)
				case "allowRead":
					sb.allowRead = paths(f, fv)
				case "allowManagedReadPathsOnly":
					flag(f, fv, &sb.managedReadOnly)
				default:
					l.sandboxKey(sb, field, k)
				}
			}
		case "network":
			no := c.object(field, v)
			if no == nil {
				continue
			}
			for _, k := range no.keys {
				nv := no.vals[k]
				if isNull(nv) {
					continue
				}
				f := field + "." + k
				switch k {
				case "allowedDomains":
					sb.allowedDomains = c.strs(f, nv, checkDomain)
				case "deniedDomains":
					sb.deniedDomains = c.strs(f, nv, checkDomain)
				case "allowLocalBinding":
					flag(f, nv, &sb.allowLocalBinding)
				case "strictAllowlist":
					flag(f, nv, &sb.strict)
				case "allowManagedDomainsOnly":
					flag(f, nv, &sb.managedDomainsOnly)
				case "httpProxyPort":
					sb.httpPort = readPort(c, f, nv)
				case "socksProxyPort":
					sb.socksPort = readPort(c, f, nv)
				default:
					l.sandboxKey(sb, field, k)
				}
			}
		case "credentials":
			l.readCredentials(c, sb, field, v) // sandbox_credentials.go
		default:
			l.sandboxKey(sb, "sandbox", key)
		}
	}
}

// sandboxKey notes a key of a sandbox object that agentloop does not
// enforce: one the reference knows, or an unknown one.
func (l *layer) sandboxKey(sb *sandboxLayer, object, key string) {
	field := object + "." + key
	known := false
	for _, k := range sandboxUnsupported(object) {
		known = known || k == key
	}
	if known {
		sb.unsupported = append(sb.unsupported, fmt.Sprintf("%s: %s", l.display, field))
		l.warnings = append(l.warnings, fmt.Sprintf("%s: %s is not supported by agentloop's sandbox and has no effect", l.display, field))
		return
	}
	l.warnings = append(l.warnings, fmt.Sprintf("%s: %s: unknown sandbox setting, ignored", l.display, field))
}

// checkDomain returns what is wrong with a domain pattern, or "".
func checkDomain(d string) string {
	t := strings.TrimSpace(d)
	switch {
	case t == "":
		return "want a domain, got an empty string"
	case strings.ContainsAny(t, "/ :@"):
		return fmt.Sprintf("want a domain such as example.com or *.example.com, got %q", d)
	case strings.Contains(strings.TrimPrefix(t, "*."), "*"):
		return fmt.Sprintf("a wildcard may only start a domain (*.example.com), got %q", d)
	}
	return ""
}

// mergeSandbox folds one layer's sandbox object into s; finishSandbox
// (sandbox_credentials.go) completes it once every layer is in.
func mergeSandbox(s *Settings, l *layer, o Options) {
	sb := l.sandbox
	if sb == nil {
		return
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	switch {
	case sb.enabled == nil:
	case !*sb.enabled && repoShipped(l.source):
		// who may set it: see Sandbox
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"%s: sandbox.enabled false ignored: a file a repository can ship may not turn the sandbox off (turn it off in ~/.claude/settings.json, --settings or Options.Sandbox)",
			l.display))
	default:
		s.Sandbox.Enabled, s.Sandbox.EnabledSource = *sb.enabled, l.source
	}
	set(&s.Sandbox.FailIfUnavailable, sb.failIfUnavailable)
	set(&s.Sandbox.AutoAllowBashIfSandboxed, sb.autoAllow)
	set(&s.Sandbox.AllowUnsandboxedCommands, sb.allowUnsandboxed)
	set(&s.Sandbox.Network.AllowLocalBinding, sb.allowLocalBinding)
	s.Sandbox.ExcludedCommands = append(s.Sandbox.ExcludedCommands, sb.excluded...)
	abs := func(dst *[]string, paths []string) {
		for _, p := range paths {
			*dst = append(*dst, sandboxPath(p, o.Home, l.root))
		}
	}
	abs(&s.Sandbox.Filesystem.AllowWrite, sb.allowWrite)
	abs(&s.Sandbox.Filesystem.DenyWrite, sb.denyWrite)
	abs(&s.Sandbox.Filesystem.DenyRead, sb.denyRead)
	abs(&s.Sandbox.Filesystem.AllowRead, sb.allowRead)
	s.Sandbox.Network.AllowedDomains = append(s.Sandbox.Network.AllowedDomains, sb.allowedDomains...)
	for range sb.allowedDomains {
		s.Sandbox.Network.AllowedDomainSources = append(s.Sandbox.Network.AllowedDomainSources, l.source)
	}
	s.Sandbox.Network.DeniedDomains = append(s.Sandbox.Network.DeniedDomains, sb.deniedDomains...)
	s.Sandbox.Unsupported = append(s.Sandbox.Unsupported, sb.unsupported...)
}

// sandboxPath makes a sandbox path of a settings file absolute.
func sandboxPath(p, home, root string) string {
	switch {
	case strings.HasPrefix(p, "//"):
		return filepath.Clean(p[1:])
	case strings.HasPrefix(p, "/"):
		return filepath.Clean(p)
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[1:])
	}
	return filepath.Join(root, p)
}
