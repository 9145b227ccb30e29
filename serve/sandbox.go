package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/session"
)

// Tenants' commands run in the kernel sandbox.
//
// The file tools are kept in the tenant's root by a hook (confine.go);
// Bash cannot be judged by its command line, so every session's commands
// (Bash, background Bash) run in agentloop's sandbox whatever the tenant
// asks: they may write only in the session's working directory and temp
// dir (and what the operator's sandbox settings add), and may not read
// the server's root (every tenant's files: the session's own tenant root
// is read back in), its data directory (the session's own configuration
// directory is read back in), the server user's configuration directory,
// nor Config.Protect (tokens file, settings). dangerouslyDisableSandbox
// is refused. The network is the operator's: the sandbox's proxy admits
// the domains of the operator's sandbox settings (none by default).
// A server whose kernel cannot sandbox refuses to start unless
// Config.UnsafeNoSandbox.

// ErrSandboxUnavailable is the error of New where the kernel cannot
// sandbox the tenants' commands and Config.UnsafeNoSandbox is not set.
var ErrSandboxUnavailable = errors.New("serve: the kernel sandbox is unavailable, so tenants' commands would run unconfined")

// sandboxAvailable is sandbox.Available; tests replace it.
var sandboxAvailable = sandbox.Available

// checkSandbox fails when the kernel cannot sandbox and the operator did
// not accept that.
func (s *Server) checkSandbox() error {
	if s.cfg.UnsafeNoSandbox {
		s.log.Warn("tenant sandbox off (UnsafeNoSandbox): tenants' commands can read and write whatever this server's user can")
		return nil
	}
	if _, err := sandboxAvailable(); err != nil {
		return fmt.Errorf("%w (%v); pass --unsafe-no-sandbox (Config.UnsafeNoSandbox) to serve anyway", ErrSandboxUnavailable, err)
	}
	return nil
}

// inlineSettings turns Base.Settings, a file path or inline JSON, into
// inline JSON, so that each session's sandbox can be merged into it.
func inlineSettings(v string) (string, error) {
	t := strings.TrimSpace(v)
	if t == "" || strings.HasPrefix(t, "{") {
		return v, nil
	}
	b, err := os.ReadFile(t)
	if err != nil {
		return "", fmt.Errorf("serve: reading the settings file: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return "", fmt.Errorf("serve: settings file %s: %w", t, err)
	}
	return string(b), nil
}

// operatorSandbox is the operator's sandbox settings: Base.Sandbox, or the
// "sandbox" key of Base.Settings.
func (s *Server) operatorSandbox() (agentloop.SandboxSettings, error) {
	var sb agentloop.SandboxSettings
	if s.cfg.Base != nil && s.cfg.Base.Sandbox != nil {
		return *s.cfg.Base.Sandbox, nil
	}
	if s.cfg.Base == nil || strings.TrimSpace(s.cfg.Base.Settings) == "" {
		return sb, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s.cfg.Base.Settings), &obj); err != nil {
		return sb, fmt.Errorf("serve: settings: %w", err)
	}
	if raw := obj["sandbox"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &sb); err != nil {
			return sb, fmt.Errorf("serve: settings: sandbox: %w", err)
		}
	}
	return sb, nil
}

// tenantSandbox is the sandbox of a session of tenantRoot whose own
// configuration directory is configDir (may be empty); nil with
// UnsafeNoSandbox.
func (s *Server) tenantSandbox(tenantRoot, configDir string) (*agentloop.SandboxSettings, error) {
	if s.cfg.UnsafeNoSandbox {
		return nil, nil
	}
	sb, err := s.operatorSandbox()
	if err != nil {
		return nil, err
	}
	yes, no := true, false
	sb.Enabled = true
	sb.FailIfUnavailable = &yes
	sb.AllowUnsandboxedCommands = &no
	if sb.AutoAllowBashIfSandboxed == nil {
		sb.AutoAllowBashIfSandboxed = &no // prompts as without the sandbox
	}
	fs := agentloop.SandboxFilesystem{}
	if sb.Filesystem != nil {
		fs = *sb.Filesystem
	}
	deny := []string{s.root, s.dataDir, session.DefaultConfigDir()}
	deny = append(deny, s.cfg.Protect...)
	fs.DenyRead = append(slices.Clone(fs.DenyRead), deny...)
	fs.AllowRead = append(slices.Clone(fs.AllowRead), tenantRoot)
	if configDir != "" {
		fs.AllowRead = append(fs.AllowRead, configDir)
	}
	sb.Filesystem = &fs
	return &sb, nil
}
