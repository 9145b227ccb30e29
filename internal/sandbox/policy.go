package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
)

// ErrUnavailable reports that this kernel or platform cannot enforce a
// policy: no Landlock, a Landlock too old for what the policy needs, or
// no seccomp filter for this architecture.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrNoMetadataProtection is wrapped by MetadataProtected's error when
// the sandbox cannot stop commands from changing metadata (modes, owners,
// times, extended attributes) outside their writable roots.
var ErrNoMetadataProtection = errors.New("sandbox: no metadata protection")

// NetMode is what a sandboxed command may do on the network.
type NetMode int

const (
	// NetNone allows no TCP connection at all; with AllowLocalBinding
	// the command may still listen on TCP ports.
	NetNone NetMode = iota
	// NetProxy allows TCP connections to Policy.ProxyPort only, and sets
	// the usual proxy variables in the command's environment so that
	// HTTP clients go through the proxy there.
	NetProxy
	// NetAll does not restrict the network at all: every socket family
	// and type (UDP, so DNS, included), every TCP connection and bind.
	// io_uring and the terminal-injection ioctls stay refused, and the
	// filesystem rules are the same as in the other modes.
	NetAll
)

// Policy is what a sandboxed command may do. Paths must be absolute;
// paths that do not exist when the command starts are ignored, except
// those of Protect.
type Policy struct {
	// ReadOnly allows writing only beneath TempDir (and to the device
	// files every command needs, such as /dev/null): WriteAllow is
	// ignored.
	ReadOnly bool
	// WriteAllow are the trees the command may write in.
	WriteAllow []string
	// WriteDeny are trees or files inside WriteAllow that stay read-only.
	WriteDeny []string
	// ReadDeny are trees or files the command may neither read, execute
	// nor write.
	ReadDeny []string
	// ReadAllow are trees or files inside ReadDeny that may be read
	// after all.
	ReadAllow []string
	// TempDir is always writable, and is the command's TMPDIR. Empty
	// means none.
	TempDir string
	// Protect are paths (trees or files) that must stay unwritable to
	// the command whether or not they exist when it starts, such as the
	// configuration a later, unsandboxed program loads from the working
	// directory (.claude, .mcp.json). The contract: the command cannot
	// write, create, remove, rename, link over, link out of or into, or
	// change the metadata of a protected path or anything beneath it,
	// nor replace a symbolic link met on the way to one. Where
	// ProtectsMissingPaths reports true (the mount step), a protected
	// path that does not exist is held by an empty placeholder directory
	// at its first missing component, bound read-only, which the sandbox
	// removes once no process that could see it remains; Start refuses
	// (with an error, nothing started) a protected path reached through
	// a symbolic link that lies inside a writable root, which the
	// command could replace. Otherwise (Landlock alone) only the
	// protected paths that exist when the command starts are enforced,
	// like WriteDeny, and the links met on the way to them are kept.
	// Protect paths are never dropped by the mount step's limit on
	// denied paths.
	Protect []string

	Network NetMode
	// ProxyPort is the loopback port of the filtering proxy, for
	// NetProxy.
	ProxyPort int
	// AllowLocalBinding lets the command bind and listen on TCP ports.
	AllowLocalBinding bool
	// UnsetEnv are variables removed from the command's environment
	// (unsetenv.go).
	UnsetEnv []string
}

// validate checks the parts of p that can be wrong on their own.
func (p *Policy) validate() error {
	if p == nil {
		return errors.New("sandbox: nil policy")
	}
	for _, list := range [][]string{p.WriteAllow, p.WriteDeny, p.ReadDeny, p.ReadAllow, p.Protect, {p.TempDir}} {
		for _, path := range list {
			if path != "" && !filepath.IsAbs(path) {
				return fmt.Errorf("sandbox: path %q is not absolute", path)
			}
		}
	}
	switch p.Network {
	case NetNone, NetAll:
	case NetProxy:
		if p.ProxyPort <= 0 || p.ProxyPort > 65535 {
			return fmt.Errorf("sandbox: proxy port %d out of range", p.ProxyPort)
		}
	default:
		return fmt.Errorf("sandbox: unknown network mode %d", p.Network)
	}
	return nil
}

// needsTCP reports whether the command may create TCP sockets at all.
func (p *Policy) needsTCP() bool { return p.Network == NetProxy || p.AllowLocalBinding }

// needsNetRules reports whether the policy needs Landlock's TCP rules:
// every mode but NetAll restricts connections (and binding unless
// AllowLocalBinding), and NetNone without binding blocks TCP in seccomp
// already, so only the modes that let TCP sockets be created need them.
func (p *Policy) needsNetRules() bool { return p.Network != NetAll && p.needsTCP() }

// sockets returns which sockets the seccomp filter lets the command
// create under p.
func (p *Policy) sockets() socketRule {
	switch {
	case p.Network == NetAll:
		return socketsAny
	case p.needsTCP():
		return socketsTCP
	default:
		return socketsUnix
	}
}

// proxyVars are the variables that point HTTP clients at a proxy.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}

// Env returns the environment entries the policy sets for the command,
// to be appended to its environment (later entries win): TMPDIR, and
// with NetProxy the proxy variables, with NO_PROXY emptied so that no
// host bypasses the proxy. NetNone and NetAll set TMPDIR only.
func (p *Policy) Env() []string {
	var env []string
	if p.TempDir != "" {
		env = append(env, "TMPDIR="+p.TempDir)
	}
	if p.Network == NetProxy {
		url := "http://127.0.0.1:" + strconv.Itoa(p.ProxyPort)
		for _, v := range proxyVars {
			env = append(env, v+"="+url)
		}
		env = append(env, "NO_PROXY=", "no_proxy=")
	}
	return env
}
