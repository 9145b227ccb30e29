package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/internal/sandbox/netproxy"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tools"
	"github.com/google/uuid"
)

// ErrSandboxUnavailable is wrapped by the error of a session whose
// settings require the sandbox (sandbox.failIfUnavailable) where the
// kernel cannot provide it (no Landlock, or not Linux).
var ErrSandboxUnavailable = sandbox.ErrUnavailable

// SandboxSettings is agentloop.SandboxSettings as the session reads it; the fields are
// documented there.
type SandboxSettings struct {
	Enabled                  bool               `json:"enabled"`
	FailIfUnavailable        *bool              `json:"failIfUnavailable,omitempty"`
	AutoAllowBashIfSandboxed *bool              `json:"autoAllowBashIfSandboxed,omitempty"`
	AllowUnsandboxedCommands *bool              `json:"allowUnsandboxedCommands,omitempty"`
	ExcludedCommands         []string           `json:"excludedCommands,omitempty"`
	Filesystem               *SandboxFilesystem `json:"filesystem,omitempty"`
	Network                  *SandboxNetwork    `json:"network,omitempty"`
}

// SandboxFilesystem is agentloop.SandboxFilesystem as the session reads it; the fields are
// documented there.
type SandboxFilesystem struct {
	AllowWrite []string `json:"allowWrite,omitempty"`
	DenyWrite  []string `json:"denyWrite,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
	AllowRead  []string `json:"allowRead,omitempty"`
}

// SandboxNetwork is agentloop.SandboxNetwork as the session reads it; the fields are
// documented there.
type SandboxNetwork struct {
	AllowedDomains    []string `json:"allowedDomains,omitempty"`
	DeniedDomains     []string `json:"deniedDomains,omitempty"`
	AllowLocalBinding bool     `json:"allowLocalBinding,omitempty"`
}

// withSandboxOption merges the Sandbox option into the inline settings
// flag, as the SDKs do. A settings file path cannot take it.
func withSandboxOption(flag string, sb *SandboxSettings) (string, error) {
	if sb == nil {
		return flag, nil
	}
	obj := map[string]json.RawMessage{}
	if t := strings.TrimSpace(flag); t != "" {
		if !strings.HasPrefix(t, "{") {
			return "", fmt.Errorf("%w: Sandbox cannot be combined with a settings file path (%s); pass the settings inline", ErrInvalidOption, flag)
		}
		if err := json.Unmarshal([]byte(t), &obj); err != nil {
			return "", fmt.Errorf("%w: settings: %w", ErrInvalidOption, err)
		}
	}
	v := *sb
	if v.FailIfUnavailable == nil && v.Enabled {
		yes := true
		v.FailIfUnavailable = &yes
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: sandbox: %w", ErrInvalidOption, err)
	}
	obj["sandbox"] = raw
	out, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("%w: settings: %w", ErrInvalidOption, err)
	}
	return string(out), nil
}

// sandboxState is a session's sandbox: its settings, what the kernel can
// do, and the proxy, started at the first sandboxed command with network.
type sandboxState struct {
	cfg      *settings.Sandbox // shared with sessions that read the same (sharedSandbox): never changed
	abi      int
	unavail  error    // why the kernel cannot sandbox; nil when it can
	warnings []string // shown once, after the first init message
	noticed  atomic.Bool
	// configPaths are the session's configuration outside its working
	// directories, which no sandboxed command may write
	// (sandbox_config.go).
	configPaths []string // shared like cfg (sharedConfigPaths): never changed

	mu    sync.Mutex
	proxy *netproxy.Proxy
}

// sandboxAvailable is sandbox.Available, replaced by tests that need a
// kernel without Landlock.
var sandboxAvailable = sandbox.Available

// sandboxMetadata is sandbox.MetadataProtected, replaced by tests that
// need a process without CAP_SYS_ADMIN.
var sandboxMetadata = sandbox.MetadataProtected

// maxDenyWalk bounds the entries visited to expand the deny rules with
// wildcards, per command.
const maxDenyWalk = 20000

// setupSandbox prepares the session's sandbox from the merged settings and
// installs the Bash tool's Decider. It only asks the kernel what it can
// do: nothing is started before the first Bash command.
func (s *Session) setupSandbox(st *settings.Settings) error {
	sb := &sandboxState{cfg: sharedSandbox.share(&st.Sandbox), configPaths: s.sharedConfigPaths(st)}
	sb.abi, sb.unavail = sandboxAvailable()
	switch {
	case sb.unavail == nil:
	case sb.cfg.Enabled && sb.cfg.FailIfUnavailable:
		return fmt.Errorf("agentloop: sandbox.failIfUnavailable is set: %w", sb.unavail)
	case sb.cfg.Enabled:
		sb.warnings = append(sb.warnings, fmt.Sprintf("The sandbox is enabled but cannot run here (%v): Bash commands run unsandboxed.", sb.unavail))
	case sb.byDefault():
		// Never silently: the default sandbox is a promise too.
		sb.warnings = append(sb.warnings, fmt.Sprintf("The sandbox cannot run here (%v): Bash commands run unsandboxed. Set sandbox.enabled to false to turn it off.", sb.unavail))
	}
	if sb.unavail == nil && sb.on() {
		if ok, err := sandboxMetadata(); !ok {
			sb.warnings = append(sb.warnings, fmt.Sprintf("The sandbox confines Bash commands' writes but not their changes to file modes, owners and times outside the writable directories here (%v), nor their creating configuration that does not exist yet (a working directory's .claude or .mcp.json).", err))
		}
	}
	if err := sb.checkSandboxKeys(); err != nil { // sandbox_keys.go
		return err
	}
	for _, u := range sb.cfg.Unsupported {
		sb.warnings = append(sb.warnings, u+" is not supported by agentloop's sandbox and has no effect.")
	}
	for _, w := range sb.warnings { // the stream has them in sandboxNotice's message
		s.diag.Log(DiagSandbox, w)
	}
	if sb.cfg.Disabled() {
		s.diag.Log(DiagSandbox, fmt.Sprintf("The sandbox is off: sandbox.enabled is false in %s.", sb.cfg.EnabledSource))
	}
	// The shells are made now, with the session's first id: their
	// directory, which holds the sandbox's temporary one, stays that
	// session's after a /clear (sandboxPolicy).
	tools.BackgroundShells(s.env)
	s.sb = sb
	sandbox.SetDecider(s.env.State, s.decideSandbox)
	return nil
}

// byDefault reports whether the sandbox is agentloop's default one: no
// settings source sets sandbox.enabled. It confines writes and reads as
// the enabled sandbox does, but leaves the network alone, does not
// auto-allow Bash calls and never fails the session.
func (sb *sandboxState) byDefault() bool { return sb.cfg.EnabledSource == "" }

// on reports whether the settings want Bash commands sandboxed outside
// plan mode: enabled, or by default.
func (sb *sandboxState) on() bool { return sb.cfg.Enabled || sb.byDefault() }

// sandboxEnabled reports whether Bash commands of the session run in the
// kernel sandbox now.
func (s *Session) sandboxEnabled() bool {
	return s.sb != nil && s.sb.unavail == nil && !testDisableSandbox.Load() &&
		(s.sb.on() || s.currentMode() == PermissionPlan)
}

// sandboxUnavailable is why Bash commands run unsandboxed although the
// session wants them sandboxed (system/init's sandbox_unavailable), or "".
func (s *Session) sandboxUnavailable() string {
	if s.sb == nil || s.sb.unavail == nil || !(s.sb.on() || s.currentMode() == PermissionPlan) {
		return ""
	}
	return s.sb.unavail.Error()
}

// sandboxNotice is the one-time system message with the sandbox's
// warnings, or nil.
func (s *Session) sandboxNotice() *message.System {
	if s.sb == nil || len(s.sb.warnings) == 0 || s.sb.noticed.Swap(true) {
		return nil
	}
	text, _ := json.Marshal(strings.Join(s.sb.warnings, "\n"))
	return &message.System{Subtype: "notification", SessionID: s.env.SessionID, UUID: uuid.NewString(),
		Data: map[string]json.RawMessage{"key": json.RawMessage(`"sandbox"`), "text": text,
			"priority": json.RawMessage(`"high"`)}}
}

// unsandboxedByChoice reports whether the settings let this command run
// outside the sandbox: an honoured dangerouslyDisableSandbox, or an
// excluded command.
func (s *Session) unsandboxedByChoice(command string, disable bool) bool {
	cfg := s.sb.cfg
	if disable && cfg.AllowUnsandboxedCommands {
		return true
	}
	if strings.ContainsAny(command, ";&|`$<>()\n\\") {
		return false // only a plain command line can be excluded
	}
	line := strings.Join(strings.Fields(command), " ")
	for _, e := range cfg.ExcludedCommands {
		e = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(e), ":*"), " *"))
		if e != "" && (line == e || strings.HasPrefix(line, e+" ")) {
			return true
		}
	}
	return false
}

// decideSandbox is the Bash tool's sandbox.Decider: the policy of one
// command, or nil to run it unsandboxed.
func (s *Session) decideSandbox(ctx context.Context, req sandbox.Request) (*sandbox.Policy, error) {
	sb := s.sb
	plan := s.currentMode() == PermissionPlan
	switch {
	case testDisableSandbox.Load(), sb.unavail != nil:
		return nil, nil
	case plan:
		// Always sandboxed, whatever the settings and the call say.
	case !sb.on(), s.unsandboxedByChoice(req.Command, req.Unsandboxed):
		return nil, nil
	}
	return s.sandboxPolicy(plan)
}

// sandboxPolicy is the policy of a sandboxed command of the session:
// read-only in plan mode. The kernel must be able to sandbox.
func (s *Session) sandboxPolicy(plan bool) (*sandbox.Policy, error) {
	sb := s.sb
	tempDir := tools.BackgroundShells(s.env).TempDir()
	if err := os.MkdirAll(tempDir, 0o700); err != nil {
		return nil, fmt.Errorf("session temp dir: %w", err)
	}
	dirs := append([]string{s.env.Cwd}, s.env.AdditionalDirs...)
	readDeny, _ := sandbox.ExpandGlobs(s.checker.DenyGlobs(false), dirs, maxDenyWalk)
	writeDeny, _ := sandbox.ExpandGlobs(s.checker.DenyGlobs(true), dirs, maxDenyWalk)
	protect, existing := s.configProtect() // sandbox_config.go
	p := &sandbox.Policy{
		TempDir:   tempDir,
		ReadDeny:  append(readDeny, sb.cfg.Filesystem.DenyRead...),
		ReadAllow: sb.cfg.Filesystem.AllowRead,
		WriteDeny: append(append(writeDeny, sb.cfg.Filesystem.DenyWrite...), existing...),
		Protect:   protect,
	}
	sb.applyCredentials(p) // sandbox_keys.go
	if plan {
		p.ReadOnly = true
		return p, nil
	}
	p.WriteAllow = append(dirs, sb.cfg.Filesystem.AllowWrite...)
	if !sb.cfg.Enabled { // the default sandbox: the network as without one
		p.Network = sandbox.NetAll
		return p, nil
	}
	p.AllowLocalBinding = sb.cfg.Network.AllowLocalBinding
	if port := sb.userProxyPort(); port > 0 { // sandbox_keys.go: the user's own proxy
		p.Network, p.ProxyPort = sandbox.NetProxy, port
	} else if allowed, _ := s.sandboxDomains(); len(allowed) > 0 {
		port, err := s.sandboxProxy()
		if err != nil {
			return nil, err
		}
		p.Network, p.ProxyPort = sandbox.NetProxy, port
	}
	return p, nil
}

// sandboxAutoAllows reports whether a Bash call that the checker would ask
// about runs at once because it is sandboxed (autoAllowBashIfSandboxed).
// Calls that a rule, a hook or a safety check asks about still ask.
func (s *Session) sandboxAutoAllows(input json.RawMessage, d permission.Decision) bool {
	if s.sb == nil || !s.sb.cfg.Enabled || !s.sb.cfg.AutoAllowBashIfSandboxed || !s.sandboxEnabled() {
		return false
	}
	if d.Behavior != permission.Ask || d.Rule != "" || d.ReasonType == permission.ReasonRule ||
		d.ReasonType == permission.ReasonSafetyCheck || d.ReasonType == "hook" {
		return false
	}
	var in struct {
		Command string `json:"command"`
		Disable bool   `json:"dangerouslyDisableSandbox"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	return !s.unsandboxedByChoice(in.Command, in.Disable)
}

// sandboxEscape is the reason a Bash call that the checker allows is
// asked all the same: under the default sandbox, the model's
// dangerouslyDisableSandbox would run it unsandboxed, and an allow rule
// or a read-only default judged the command, not where it runs (a link
// swapped by an earlier command, say, is the sandbox's to stop). In
// bypassPermissions, and with a sandbox the settings enable (the
// reference's, where such calls take the usual permission), it is "".
func (s *Session) sandboxEscape(input json.RawMessage) string {
	if s.sb == nil || !s.sb.byDefault() || !s.sb.cfg.AllowUnsandboxedCommands || !s.sandboxEnabled() ||
		s.currentMode() == PermissionBypass || s.currentMode() == PermissionPlan {
		return ""
	}
	var in struct {
		Disable bool `json:"dangerouslyDisableSandbox"`
	}
	if json.Unmarshal(input, &in) != nil || !in.Disable {
		return ""
	}
	return "the command asks to run outside the default sandbox (dangerouslyDisableSandbox)"
}

// sandboxDomains are the domains the proxy admits and refuses: the
// settings' lists and the WebFetch(domain:…) allow and deny rules, as
// they are now.
func (s *Session) sandboxDomains() (allowed, denied []string) {
	allowed = slices.Clone(s.sb.cfg.Network.AllowedDomains)
	denied = slices.Clone(s.sb.cfg.Network.DeniedDomains)
	for _, src := range s.checker.Rules().Sources {
		if s.sb.countsAllowRules(string(src.Source)) { // sandbox_keys.go
			allowed = append(allowed, webFetchDomains(src.Allow)...)
		}
		denied = append(denied, webFetchDomains(src.Deny)...)
	}
	return allowed, denied
}

// webFetchDomains returns the domains of WebFetch(domain:…) rules.
func webFetchDomains(rules []string) []string {
	var out []string
	for _, r := range rules {
		r = strings.TrimSpace(r)
		if d, ok := strings.CutPrefix(r, "WebFetch(domain:"); ok && strings.HasSuffix(d, ")") {
			out = append(out, strings.TrimSpace(strings.TrimSuffix(d, ")")))
		}
	}
	return out
}

// sandboxProxy returns the port of the session's filtering proxy,
// starting it on first use.
func (s *Session) sandboxProxy() (int, error) {
	sb := s.sb
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.proxy == nil {
		p, err := netproxy.New(netproxy.Config{Allow: func(host string, port int) bool {
			allowed, denied := s.sandboxDomains()
			return netproxy.DomainMatcher(allowed, denied)(host, port)
		}})
		if err != nil {
			return 0, fmt.Errorf("starting the sandbox's proxy: %w", err)
		}
		sb.proxy = p
	}
	return sb.proxy.Addr().Port, nil
}

// closeSandbox stops the session's proxy.
func (s *Session) closeSandbox() {
	if s.sb == nil {
		return
	}
	s.sb.mu.Lock()
	defer s.sb.mu.Unlock()
	if s.sb.proxy != nil {
		s.sb.proxy.Close()
		s.sb.proxy = nil
	}
}
