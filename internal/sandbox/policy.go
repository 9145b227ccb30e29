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
)

// Policy is what a sandboxed command may do. Paths must be absolute;
// paths that do not exist when the command starts are ignored.
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

	Network NetMode
	// ProxyPort is the loopback port of the filtering proxy, for
	// NetProxy.
	ProxyPort int
	// AllowLocalBinding lets the command bind and listen on TCP ports.
	AllowLocalBinding bool
}

// validate checks the parts of p that can be wrong on their own.
func (p *Policy) validate() error {
	if p == nil {
		return errors.New("sandbox: nil policy")
	}
	for _, list := range [][]string{p.WriteAllow, p.WriteDeny, p.ReadDeny, p.ReadAllow, {p.TempDir}} {
		for _, path := range list {
			if path != "" && !filepath.IsAbs(path) {
				return fmt.Errorf("sandbox: path %q is not absolute", path)
			}
		}
	}
	switch p.Network {
	case NetNone:
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

// proxyVars are the variables that point HTTP clients at a proxy.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}

// Env returns the environment entries the policy sets for the command,
// to be appended to its environment (later entries win): TMPDIR, and
// with NetProxy the proxy variables, with NO_PROXY emptied so that no
// host bypasses the proxy.
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
