package settings

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// This file reads the sandbox keys that restrict more than the base
// sandbox object does: sandbox.credentials, the network's
// strictAllowlist, allowManagedDomainsOnly and proxy ports, and the
// filesystem's allowManagedReadPathsOnly; and, once every file is read,
// decides which sources' loosening entries count (finishSandbox).

// SandboxCredentials are the secrets that sandboxed commands may not
// see, from every source. agentloop has no masking proxy: an entry whose
// Mode is "mask" is enforced as "deny" (the host reports it).
type SandboxCredentials struct {
	Files   []CredentialFile
	EnvVars []CredentialEnvVar
	// Refused names the credentials keys that agentloop cannot honour
	// (awsPairs, sigv4: they need a proxy that re-signs requests), each
	// with the file that set it, such as
	// "~/.claude/settings.json: sandbox.credentials.awsPairs". The host
	// refuses to start a sandboxed session while it is not empty.
	Refused []string
}

// CredentialFile is an entry of sandbox.credentials.files: a file or
// directory that sandboxed commands cannot read.
type CredentialFile struct {
	// Path is absolute, resolved like the sandbox's filesystem paths.
	Path string
	// Mode is "deny" (the default) or "mask".
	Mode   string
	Source Source
}

// CredentialEnvVar is an entry of sandbox.credentials.envVars: a variable
// removed from sandboxed commands' environment.
type CredentialEnvVar struct {
	Name string
	// Mode is "deny" (the default) or "mask".
	Mode   string
	Source Source
}

// Credential modes.
const (
	CredentialDeny = "deny"
	CredentialMask = "mask"
)

// credentialExtras are the keys of a credentials entry that only shape a
// mask (what to extract and where to inject it). With mask enforced as
// deny they have no effect; they are accepted without a warning.
var credentialExtras = []string{"extract", "onExtractNoMatch", "decode", "maskClaims", "maskDuplicates", "injectHosts"}

// readCredentials reads the sandbox.credentials object of a file.
func (l *layer) readCredentials(c *checker, sb *sandboxLayer, field string, raw json.RawMessage) {
	o := c.object(field, raw)
	if o == nil {
		return
	}
	for _, k := range o.keys {
		v := o.vals[k]
		if isNull(v) {
			continue
		}
		f := field + "." + k
		switch k {
		case "files":
			l.credentialEntries(c, f, "path", v, func(name, mode string) {
				sb.credFiles = append(sb.credFiles, CredentialFile{Path: name, Mode: mode, Source: l.source})
			})
		case "envVars":
			l.credentialEntries(c, f, "name", v, func(name, mode string) {
				sb.credEnv = append(sb.credEnv, CredentialEnvVar{Name: name, Mode: mode, Source: l.source})
			})
		case "awsPairs", "sigv4":
			sb.credRefused = append(sb.credRefused, l.display+": "+f)
		case "allowPlaintextInject":
			// Only loosens how a mask injects the real value; agentloop
			// never injects one (mask is enforced as deny).
			if _, ok := c.boolean(f, v); ok {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: %s has no effect: agentloop enforces mask as deny and injects no credentials", l.display, f))
			}
		default:
			l.warnings = append(l.warnings, fmt.Sprintf("%s: %s: unknown sandbox setting, ignored", l.display, f))
		}
	}
}

// credentialEntries reads an array of credentials entries, each an object
// naming its file or variable by key (path or name), and passes each good
// one to add. A malformed entry fails the load: a restriction is never
// dropped quietly.
func (l *layer) credentialEntries(c *checker, field, key string, raw json.RawMessage, add func(name, mode string)) {
	items, ok := c.array(field, raw, "an array of objects")
	if !ok {
		return
	}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		o := c.object(f, it)
		if o == nil {
			continue
		}
		name, mode, good := "", CredentialDeny, true
		if v, ok := o.vals[key]; !ok || isNull(v) {
			c.bad(f, "missing %q", key)
			good = false
		} else if s, ok := c.str(f+"."+key, v); !ok {
			good = false
		} else if strings.TrimSpace(s) == "" {
			c.bad(f+"."+key, "want a %s, got an empty string", map[string]string{"path": "path", "name": "variable name"}[key])
			good = false
		} else if key == "name" && strings.ContainsAny(s, "=\x00") {
			c.bad(f+"."+key, "want a variable name, got %q", s)
			good = false
		} else {
			name = s
		}
		if v, ok := o.vals["mode"]; ok && !isNull(v) {
			if s, ok := c.str(f+".mode", v); !ok {
				good = false
			} else if s != CredentialDeny && s != CredentialMask {
				c.bad(f+".mode", "want %q or %q, got %q", CredentialDeny, CredentialMask, s)
				good = false
			} else {
				mode = s
			}
		}
		for _, k := range o.keys {
			known := k == key || k == "mode"
			for _, e := range credentialExtras {
				known = known || k == e
			}
			if !known {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: %s.%s: unknown sandbox setting, ignored", l.display, f, k))
			}
		}
		if good {
			add(name, mode)
		}
	}
}

// readPort reads a TCP port number (1 to 65535).
func readPort(c *checker, field string, raw json.RawMessage) *int {
	var f float64
	if kind(raw) != "number" || json.Unmarshal(raw, &f) != nil {
		c.wrongType(field, "a port number", raw)
		return nil
	}
	if f != math.Trunc(f) || f < 1 || f > 65535 {
		c.bad(field, "want a port number from 1 to 65535, got %v", f)
		return nil
	}
	n := int(f)
	return &n
}

// finishSandbox completes the merged sandbox once every layer (lowest
// precedence first) has been folded in by mergeSandbox: it decides who
// may set the keys that only some sources may set, and rebuilds the lists
// whose entries count only from some sources.
//
// The project and local files (which a repository can ship) lose their
// excludedCommands, filesystem.allowWrite and filesystem.allowRead, with
// a warning, when the managed policy or --settings sets
// allowUnsandboxedCommands false or the managed policy sets
// network.allowManagedDomainsOnly: those entries would loosen a sandbox
// that an administrator made strict. Their proxy ports are always
// ignored (a repository must not route sandboxed traffic to a port of
// its choosing), and so is their strictAllowlist; under the managed
// policy's allowManagedDomainsOnly, only the policy's proxy ports count.
func finishSandbox(s *Settings, layers []*layer, o Options) {
	sb := &s.Sandbox
	lockdown, lockdownBy := false, ""
	sb.Network.AllowManagedDomainsOnly, sb.Network.StrictAllowlist = false, false
	sb.Filesystem.AllowManagedReadPathsOnly = false
	sb.Network.HTTPProxyPort, sb.Network.SOCKSProxyPort = 0, 0
	sb.Credentials = SandboxCredentials{}
	var portFrom [2]*layer // the layers whose proxy ports hold
	warn := func(l *layer, key, why string) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s ignored: %s", l.display, key, why))
	}
	for _, l := range layers {
		x := l.sandbox
		if x == nil {
			continue
		}
		managed := l.source == PolicySettings
		if x.allowUnsandboxed != nil && !*x.allowUnsandboxed && (managed || l.source == FlagSettings) {
			lockdown, lockdownBy = true, l.display+" sets sandbox.allowUnsandboxedCommands false"
		}
		for _, m := range []struct {
			v   *bool
			dst *bool
			key string
		}{
			{x.managedDomainsOnly, &sb.Network.AllowManagedDomainsOnly, "sandbox.network.allowManagedDomainsOnly"},
			{x.managedReadOnly, &sb.Filesystem.AllowManagedReadPathsOnly, "sandbox.filesystem.allowManagedReadPathsOnly"},
		} {
			switch {
			case m.v == nil:
			case !managed:
				warn(l, m.key, "only the managed policy may set it")
			default:
				*m.dst = *m.v
			}
		}
		if managed && sb.Network.AllowManagedDomainsOnly {
			lockdown, lockdownBy = true, l.display+" sets sandbox.network.allowManagedDomainsOnly"
		}
		switch {
		case x.strict == nil:
		case repoShipped(l.source):
			warn(l, "sandbox.network.strictAllowlist", "a file a repository can ship may not set it (set it in ~/.claude/settings.json, --settings or the managed policy)")
		default:
			sb.Network.StrictAllowlist = sb.Network.StrictAllowlist || *x.strict
		}
		for i, p := range []struct {
			v   *int
			dst *int
			key string
		}{
			{x.httpPort, &sb.Network.HTTPProxyPort, "sandbox.network.httpProxyPort"},
			{x.socksPort, &sb.Network.SOCKSProxyPort, "sandbox.network.socksProxyPort"},
		} {
			switch {
			case p.v == nil:
			case repoShipped(l.source):
				warn(l, p.key, "a file a repository can ship may not choose the sandbox's proxy")
			default:
				*p.dst, portFrom[i] = *p.v, l
			}
		}
		for _, f := range x.credFiles {
			f.Path = sandboxPath(f.Path, o.Home, l.root)
			sb.Credentials.Files = append(sb.Credentials.Files, f)
		}
		sb.Credentials.EnvVars = append(sb.Credentials.EnvVars, x.credEnv...)
		sb.Credentials.Refused = append(sb.Credentials.Refused, x.credRefused...)
	}
	// A proxy of the user's choosing would filter in place of the
	// administrator's domain list.
	for i, dst := range []*int{&sb.Network.HTTPProxyPort, &sb.Network.SOCKSProxyPort} {
		if l := portFrom[i]; l != nil && sb.Network.AllowManagedDomainsOnly && l.source != PolicySettings {
			warn(l, []string{"sandbox.network.httpProxyPort", "sandbox.network.socksProxyPort"}[i],
				"the managed policy sets sandbox.network.allowManagedDomainsOnly")
			*dst = 0
		}
	}

	sb.ExcludedCommands, sb.Filesystem.AllowWrite, sb.Filesystem.AllowRead = nil, nil, nil
	sb.Network.AllowedDomains, sb.Network.AllowedDomainSources = nil, nil
	abs := func(dst *[]string, l *layer, paths []string) {
		for _, p := range paths {
			*dst = append(*dst, sandboxPath(p, o.Home, l.root))
		}
	}
	for _, l := range layers {
		x := l.sandbox
		if x == nil {
			continue
		}
		repo := repoShipped(l.source)
		loosen := func(key string, n int) bool {
			if n > 0 && repo && lockdown {
				warn(l, key, lockdownBy+", so a file a repository can ship may not loosen the sandbox")
				return false
			}
			return n > 0
		}
		if loosen("sandbox.excludedCommands", len(x.excluded)) {
			sb.ExcludedCommands = append(sb.ExcludedCommands, x.excluded...)
		}
		if loosen("sandbox.filesystem.allowWrite", len(x.allowWrite)) {
			abs(&sb.Filesystem.AllowWrite, l, x.allowWrite)
		}
		switch {
		case len(x.allowRead) == 0:
		case sb.Filesystem.AllowManagedReadPathsOnly && l.source != PolicySettings:
			warn(l, "sandbox.filesystem.allowRead", "the managed policy sets sandbox.filesystem.allowManagedReadPathsOnly")
		case loosen("sandbox.filesystem.allowRead", len(x.allowRead)):
			abs(&sb.Filesystem.AllowRead, l, x.allowRead)
		}
		switch {
		case len(x.allowedDomains) == 0:
		case !sb.Network.AllowsFrom(l.source) && sb.Network.AllowManagedDomainsOnly:
			warn(l, "sandbox.network.allowedDomains", "the managed policy sets sandbox.network.allowManagedDomainsOnly")
		case !sb.Network.AllowsFrom(l.source):
			warn(l, "sandbox.network.allowedDomains", "sandbox.network.strictAllowlist is set")
		default:
			for _, d := range x.allowedDomains {
				sb.Network.AllowedDomains = append(sb.Network.AllowedDomains, d)
				sb.Network.AllowedDomainSources = append(sb.Network.AllowedDomainSources, l.source)
			}
		}
	}
}
