package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

const sandboxSecret = "SANDBOX-SECRET-42"

// sandboxWorld is a project with a denied secret, a directory outside
// it, and loopback sinks that record whether anything reached them.
type sandboxWorld struct {
	cwd, out, secret string
	tcp              net.Listener
	tcpHit           atomic.Bool
	udp              net.PacketConn
	web              *http.Server
	webAddr          string
	webHit           atomic.Bool
}

func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
}

func newSandboxWorld(t *testing.T) *sandboxWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &sandboxWorld{cwd: filepath.Join(root, "project"), out: filepath.Join(root, "outside")}
	w.secret = filepath.Join(w.cwd, "secrets", "key")
	for _, d := range []string{filepath.Join(w.cwd, "secrets"), filepath.Join(w.cwd, "src"), w.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.secret, []byte(sandboxSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	if w.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := w.tcp.Accept()
			if err != nil {
				return
			}
			w.tcpHit.Store(true)
			c.Close()
		}
	}()
	if w.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.webAddr = ln.Addr().String()
	w.web = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.webHit.Store(true)
		io.WriteString(rw, "hello from the allowed host")
	})}
	go w.web.Serve(ln)
	t.Cleanup(func() { w.tcp.Close(); w.udp.Close(); w.web.Close() })
	return w
}

// udpGot reports whether a datagram reached the UDP sink.
func (w *sandboxWorld) udpGot() bool {
	w.udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	b := make([]byte, 64)
	_, _, err := w.udp.ReadFrom(b)
	return err == nil
}

// session builds a session for w with opts (Cwd, settings isolation and a
// provider that is never called filled in).
func (w *sandboxWorld) session(t *testing.T, opts Config) *Session {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Provider, opts.Cwd, opts.SettingSources = p, w.cwd, []settings.SettingSource{}
	opts.NoSessionPersistence = true
	s, err := NewSession(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// bash runs a Bash call straight through the tool, as if the permission
// check had let it through (a checker miss).
func bash(t *testing.T, s *Session, input map[string]any) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(input)
	res, err := tools.Bash().Run(context.Background(), &tool.Call{ID: "toolu_x", Input: raw, Env: s.env})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// escapes runs the attempts every sandboxed session must stop, and
// reports what got through.
func (w *sandboxWorld) escapes(t *testing.T, s *Session) []string {
	t.Helper()
	var got []string
	try := func(what, cmd string, escaped func(res tool.Result) bool) {
		if res := bash(t, s, map[string]any{"command": cmd}); escaped(res) {
			got = append(got, fmt.Sprintf("%s (%q → %.200q)", what, cmd, res.Text()))
		}
	}
	try("write outside", "echo pwned > "+w.out+"/x", func(tool.Result) bool { return exists(filepath.Join(w.out, "x")) })
	try("read denied", "cat "+w.secret, func(r tool.Result) bool { return strings.Contains(r.Text(), sandboxSecret) })
	try("connect to a sink", "echo hi > /dev/tcp/"+strings.Replace(w.tcp.Addr().String(), ":", "/", 1),
		func(tool.Result) bool { time.Sleep(50 * time.Millisecond); return w.tcpHit.Load() })
	try("udp", "echo hi > /dev/udp/"+strings.Replace(w.udp.LocalAddr().String(), ":", "/", 1),
		func(tool.Result) bool { return w.udpGot() })
	return got
}

// TestSandboxPlanModeExecutor: in plan mode, without any sandbox setting,
// a command that reaches the executor cannot write (not even in the
// working directory), read a Read-denied file, or use the network.
func TestSandboxPlanModeExecutor(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	s := w.session(t, Config{PermissionMode: PermissionPlan,
		Settings: `{"permissions": {"deny": ["Read(./secrets/**)"]}}`})
	if got := w.escapes(t, s); len(got) > 0 {
		t.Errorf("escaped the plan-mode sandbox:\n%s", strings.Join(got, "\n"))
	}
	if bash(t, s, map[string]any{"command": "echo x > src/new.txt"}); exists(filepath.Join(w.cwd, "src", "new.txt")) {
		t.Error("plan mode wrote in the working directory")
	}
	if res := bash(t, s, map[string]any{"command": `echo scratch > "$TMPDIR/s" && cat "$TMPDIR/s"`}); res.IsError || !strings.Contains(res.Text(), "scratch") {
		t.Errorf("plan mode could not use its temp dir: %q", res.Text())
	}
	if res := bash(t, s, map[string]any{"command": "cat src/../secrets/../src/../README 2>/dev/null; ls", "dangerouslyDisableSandbox": true}); res.IsError {
		t.Errorf("reading in plan mode failed: %q", res.Text())
	}
	if bash(t, s, map[string]any{"command": "echo x > " + w.out + "/y", "dangerouslyDisableSandbox": true}); exists(filepath.Join(w.out, "y")) {
		t.Error("dangerouslyDisableSandbox escaped plan mode")
	}
	// The control: the same attempts without the sandbox get through, so
	// the checks above can fail.
	restore := SetSandboxDisabledForTest(true)
	got := w.escapes(t, s)
	restore()
	if len(got) != 4 {
		t.Errorf("without the sandbox only %d of 4 attempts got through: %q", len(got), got)
	}
}

// TestSandboxDefaultModeExecutor: with the sandbox on, a command writes in
// the working directory and reaches an allowed host through the proxy,
// and nothing else.
func TestSandboxDefaultModeExecutor(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	host, _, _ := net.SplitHostPort(w.webAddr)
	s := w.session(t, Config{AllowedTools: []string{"Bash"},
		Settings: `{"permissions": {"deny": ["Read(./secrets/**)"]}}`,
		Sandbox:  &SandboxSettings{Enabled: true, Network: &SandboxNetwork{AllowedDomains: []string{host}}}})
	if got := w.escapes(t, s); len(got) > 0 {
		t.Errorf("escaped the sandbox:\n%s", strings.Join(got, "\n"))
	}
	if res := bash(t, s, map[string]any{"command": "echo x > src/new.txt && cat src/new.txt"}); res.IsError || !exists(filepath.Join(w.cwd, "src", "new.txt")) {
		t.Errorf("could not write in the working directory: %q", res.Text())
	}
	res := bash(t, s, map[string]any{"command": "curl -sS --max-time 5 http://" + w.webAddr + "/"})
	if !strings.Contains(res.Text(), "hello from the allowed host") || !w.webHit.Load() {
		t.Errorf("the allowed host was not reached through the proxy: %q", res.Text())
	}
	res = bash(t, s, map[string]any{"command": "curl -sS --max-time 5 -o /dev/null -w '%{http_code}' http://blocked.example/"})
	if !strings.Contains(res.Text(), "403") {
		t.Errorf("a host outside allowedDomains: %q", res.Text())
	}
	res = bash(t, s, map[string]any{"command": "curl -sS --max-time 5 --noproxy '*' http://" + w.webAddr + "/"})
	if strings.Contains(res.Text(), "hello from the allowed host") {
		t.Errorf("the allowed host was reached around the proxy: %q", res.Text())
	}
}

// TestSandboxChoices: excluded commands and an honoured
// dangerouslyDisableSandbox run unsandboxed; a refused one does not.
func TestSandboxChoices(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	no := false
	tests := []struct {
		name    string
		sb      SandboxSettings
		input   map[string]any
		escapes bool
	}{
		{"sandboxed", SandboxSettings{Enabled: true}, map[string]any{"command": "touch " + w.out + "/f"}, false},
		{"excluded", SandboxSettings{Enabled: true, ExcludedCommands: []string{"touch"}}, map[string]any{"command": "touch " + w.out + "/f"}, true},
		{"excluded with an operator", SandboxSettings{Enabled: true, ExcludedCommands: []string{"touch"}}, map[string]any{"command": "touch " + w.out + "/f; true"}, false},
		{"disable honoured", SandboxSettings{Enabled: true}, map[string]any{"command": "touch " + w.out + "/f", "dangerouslyDisableSandbox": true}, true},
		{"disable refused", SandboxSettings{Enabled: true, AllowUnsandboxedCommands: &no}, map[string]any{"command": "touch " + w.out + "/f", "dangerouslyDisableSandbox": true}, false},
		{"disabled", SandboxSettings{}, map[string]any{"command": "touch " + w.out + "/f"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(w.out, "f"))
			s := w.session(t, Config{Sandbox: &tt.sb})
			bash(t, s, tt.input)
			if got := exists(filepath.Join(w.out, "f")); got != tt.escapes {
				t.Errorf("wrote outside = %v, want %v", got, tt.escapes)
			}
		})
	}
}

// TestSandboxAutoAllow: autoAllowBashIfSandboxed runs a sandboxed Bash
// call that would be asked, but not one an ask rule or a deny rule
// governs, nor an unsandboxed one.
func TestSandboxAutoAllow(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	no := false
	decide := func(opts Config, input map[string]any) engine.Decision {
		s := w.session(t, opts)
		raw, _ := json.Marshal(input)
		return s.authorize(context.Background(), &engine.ToolCall{ID: "toolu_1", Name: "Bash", Input: raw, Tool: tools.Bash()})
	}
	on := &SandboxSettings{Enabled: true}
	cmd := map[string]any{"command": "make build"}
	tests := []struct {
		name  string
		opts  Config
		input map[string]any
		allow bool
	}{
		{"sandboxed", Config{Sandbox: on}, cmd, true},
		{"no sandbox", Config{}, cmd, false},
		{"auto-allow off", Config{Sandbox: &SandboxSettings{Enabled: true, AutoAllowBashIfSandboxed: &no}}, cmd, false},
		{"ask rule", Config{Sandbox: on, Settings: `{"permissions": {"ask": ["Bash(make:*)"]}}`}, cmd, false},
		{"deny rule", Config{Sandbox: on, DisallowedTools: []string{"Bash(make:*)"}}, cmd, false},
		{"unsandboxed on request", Config{Sandbox: on}, map[string]any{"command": "make build", "dangerouslyDisableSandbox": true}, false},
		{"excluded", Config{Sandbox: &SandboxSettings{Enabled: true, ExcludedCommands: []string{"make"}}}, cmd, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := decide(tt.opts, tt.input); d.Allow != tt.allow {
				t.Errorf("allow = %v (%s: %s), want %v", d.Allow, d.ReasonType, d.Message, tt.allow)
			}
		})
	}
}

// TestSandboxInitAndNotice: system/init reports the sandbox, and settings
// it cannot honour are shown once.
func TestSandboxInitAndNotice(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	s := w.session(t, Config{Settings: `{"sandbox": {"enabled": true, "network": {"allowMachLookup": ["x"]}}}`})
	if !s.initMessage().Init.SandboxEnabled {
		t.Error("sandbox_enabled is false with the sandbox on")
	}
	n := s.sandboxNotice()
	if n == nil || !strings.Contains(string(n.Data["text"]), "sandbox.network.allowMachLookup is not supported") {
		t.Fatalf("notice = %+v", n)
	}
	if s.sandboxNotice() != nil {
		t.Error("the notice came twice")
	}
	if off := w.session(t, Config{Sandbox: &SandboxSettings{}}); off.initMessage().Init.SandboxEnabled {
		t.Error("sandbox_enabled is true with the sandbox off")
	}
	if def := w.session(t, Config{}); !def.initMessage().Init.SandboxEnabled {
		t.Error("sandbox_enabled is false with the default sandbox")
	}
	if plan := w.session(t, Config{PermissionMode: PermissionPlan}); !plan.initMessage().Init.SandboxEnabled {
		t.Error("sandbox_enabled is false in plan mode")
	}
}

// TestSandboxUnavailable: where the kernel cannot sandbox, an enabled
// sandbox warns and commands run unsandboxed, or, with
// failIfUnavailable, the session does not start.
func TestSandboxUnavailable(t *testing.T) {
	old := sandboxAvailable
	sandboxAvailable = func() (int, error) { return 0, fmt.Errorf("%w: test kernel", sandbox.ErrUnavailable) }
	t.Cleanup(func() { sandboxAvailable = old })
	w := newSandboxWorld(t)
	p, _ := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: "http://127.0.0.1:1"})
	_, err := NewSession(context.Background(), &Config{Provider: p, Cwd: w.cwd, SettingSources: []settings.SettingSource{},
		NoSessionPersistence: true, Sandbox: &SandboxSettings{Enabled: true}})
	if !errors.Is(err, ErrSandboxUnavailable) {
		t.Errorf("failIfUnavailable (the option's default): err = %v", err)
	}
	no := false
	s := w.session(t, Config{Sandbox: &SandboxSettings{Enabled: true, FailIfUnavailable: &no}})
	if n := s.sandboxNotice(); n == nil || !strings.Contains(string(n.Data["text"]), "cannot run here") {
		t.Errorf("no warning: %+v", n)
	}
	if s.initMessage().Init.SandboxEnabled {
		t.Error("sandbox_enabled with no sandbox")
	}
	if bash(t, s, map[string]any{"command": "touch " + w.out + "/f"}); !exists(filepath.Join(w.out, "f")) {
		t.Error("the command did not run unsandboxed")
	}
}

// TestSandboxOptionWithSettingsFile: the Sandbox option cannot be merged
// into a settings file, as with the SDKs.
func TestSandboxOptionWithSettingsFile(t *testing.T) {
	if _, err := withSandboxOption("settings.json", &SandboxSettings{Enabled: true}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("err = %v", err)
	}
	got, err := withSandboxOption(`{"model": "haiku"}`, &SandboxSettings{Enabled: true})
	if err != nil || got != `{"model":"haiku","sandbox":{"enabled":true,"failIfUnavailable":true}}` {
		t.Errorf("merged = %s, %v", got, err)
	}
}
