package conversation

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// This file honours the sandbox keys that restrict what sandboxed
// commands see beyond the filesystem and domain lists: the credentials
// (files and variables hidden from commands), and the user's own proxy
// (network.httpProxyPort). Keys it cannot honour make the session refuse
// to start, naming the key. Which sources' allowed domains, paths and
// excluded commands count (allowManagedDomainsOnly, strictAllowlist,
// allowManagedReadPathsOnly, a strict administrator's lockdown of the
// repository's files) is decided when the settings are merged
// (settings/sandbox_credentials.go).

// checkSandboxKeys refuses the keys of sb's settings that agentloop
// cannot honour, with an error wrapping ErrInvalidOption that names them,
// and adds the warnings about keys honoured in a weaker form to sb's
// notice. setupSandbox calls it once the kernel has been asked.
func (sb *sandboxState) checkSandboxKeys() error {
	cfg := sb.cfg
	creds := &cfg.Credentials
	if len(creds.Refused) > 0 && !cfg.Disabled() {
		return fmt.Errorf("%w: %s: agentloop's sandbox cannot honour it (it needs a proxy that re-signs requests with the hidden credentials); remove it or turn the sandbox off",
			ErrInvalidOption, strings.Join(creds.Refused, ", "))
	}
	if cfg.Enabled && cfg.Network.SOCKSProxyPort > 0 {
		return fmt.Errorf("%w: sandbox.network.socksProxyPort (%d): agentloop's sandbox cannot route commands through a SOCKS proxy; use sandbox.network.httpProxyPort or remove it",
			ErrInvalidOption, cfg.Network.SOCKSProxyPort)
	}
	if (len(creds.Files) > 0 || len(creds.EnvVars) > 0) && sb.unavail != nil && sb.on() {
		return fmt.Errorf("%w: sandbox.credentials cannot be enforced: %w", ErrInvalidOption, sb.unavail)
	}
	var masked []string
	for _, f := range creds.Files {
		if f.Mode == settings.CredentialMask {
			masked = append(masked, f.Path)
		}
	}
	for _, v := range creds.EnvVars {
		if v.Mode == settings.CredentialMask {
			masked = append(masked, "$"+v.Name)
		}
	}
	if len(masked) > 0 {
		sb.warnings = append(sb.warnings, fmt.Sprintf(
			"sandbox.credentials: mode \"mask\" is enforced as \"deny\" (agentloop has no masking proxy): sandboxed commands get neither the real nor a placeholder value of %s.",
			strings.Join(masked, ", ")))
	}
	return nil
}

// applyCredentials adds the credentials to a sandboxed command's policy:
// the files (mode deny or mask alike) to what it cannot read, and no
// ReadAllow entry at or beneath one re-opens it; the variables to what is
// removed from its environment.
func (sb *sandboxState) applyCredentials(p *sandbox.Policy) {
	files := sb.cfg.Credentials.Files
	if len(files) > 0 {
		var allow []string
		for _, a := range p.ReadAllow {
			if !slices.ContainsFunc(files, func(f settings.CredentialFile) bool { return credentialCovers(f.Path, a) }) {
				allow = append(allow, a)
			}
		}
		p.ReadAllow = allow
	}
	for _, f := range files {
		p.ReadDeny = append(p.ReadDeny, f.Path)
	}
	for _, v := range sb.cfg.Credentials.EnvVars {
		p.UnsetEnv = append(p.UnsetEnv, v.Name)
	}
}

// credentialCovers reports whether path is dir or lies beneath it (both
// clean and absolute).
func credentialCovers(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// userProxyPort is the port of the user's own HTTP proxy that sandboxed
// commands must use instead of agentloop's (network.httpProxyPort), or 0.
// agentloop starts no proxy then; the user's proxy decides which hosts
// are reached.
func (sb *sandboxState) userProxyPort() int { return sb.cfg.Network.HTTPProxyPort }

// countsAllowRules reports whether the WebFetch(domain:…) allow rules of
// a permission source admit hosts for the proxy (see
// settings.SandboxNetwork.AllowsFrom).
func (sb *sandboxState) countsAllowRules(src string) bool {
	return sb.cfg.Network.AllowsFrom(settings.Source(src))
}
