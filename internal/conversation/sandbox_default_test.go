package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tools"
)

// TestSandboxDefaultOn: with no sandbox setting at all, a Bash command
// that reaches the executor (a checker miss) cannot write outside the
// working directory or read a Read-denied file, but writes inside it and
// in its temp dir, and reaches loopback over TCP and UDP (the network
// stays as the settings say: unrestricted).
func TestSandboxDefaultOn(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	s := w.session(t, Config{Settings: `{"permissions": {"deny": ["Read(./secrets/**)"]}}`})
	if !s.sandboxEnabled() || !s.initMessage().Init.SandboxEnabled {
		t.Error("the default sandbox is not on")
	}
	if u := s.initMessage().Init.SandboxUnavailable; u != "" {
		t.Errorf("sandbox_unavailable = %q on a kernel with Landlock", u)
	}
	if res := bash(t, s, map[string]any{"command": "echo pwned > " + w.out + "/x"}); exists(filepath.Join(w.out, "x")) {
		t.Errorf("the default sandbox let a command write outside the working directory: %q", res.Text())
	}
	if res := bash(t, s, map[string]any{"command": "cat " + w.secret}); strings.Contains(res.Text(), sandboxSecret) {
		t.Errorf("the default sandbox let a command read a Read-denied file: %q", res.Text())
	}
	if res := bash(t, s, map[string]any{"command": "echo x > src/new.txt"}); res.IsError || !exists(filepath.Join(w.cwd, "src", "new.txt")) {
		t.Errorf("could not write in the working directory: %q", res.Text())
	}
	if res := bash(t, s, map[string]any{"command": `echo scratch > "$TMPDIR/s" && cat "$TMPDIR/s"`}); res.IsError || !strings.Contains(res.Text(), "scratch") {
		t.Errorf("could not use the session temp dir: %q", res.Text())
	}
	tcp := strings.Replace(w.tcp.Addr().String(), ":", "/", 1)
	if res := bash(t, s, map[string]any{"command": "echo hi > /dev/tcp/" + tcp}); res.IsError {
		t.Errorf("a TCP connection to loopback failed under the default sandbox: %q", res.Text())
	}
	deadline := time.Now().Add(2 * time.Second)
	for !w.tcpHit.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !w.tcpHit.Load() {
		t.Error("the TCP sink saw no connection: the default sandbox restricts the network")
	}
	udp := strings.Replace(w.udp.LocalAddr().String(), ":", "/", 1)
	if res := bash(t, s, map[string]any{"command": "echo hi > /dev/udp/" + udp}); res.IsError || !w.udpGot() {
		t.Errorf("no datagram reached the UDP sink under the default sandbox: %q", res.Text())
	}
	// No proxy is started for the default sandbox.
	if s.sb.proxy != nil {
		t.Error("the default sandbox started the network proxy")
	}
}

// TestSandboxDefaultTurnedOff: sandbox.enabled false in the inline
// settings and a non-nil Options.Sandbox without Enabled turn the default
// sandbox off, so the same outside write succeeds; in a project settings
// file it does not.
func TestSandboxDefaultTurnedOff(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	tests := []struct {
		name  string
		opts  Config
		file  string // a project settings file to write
		stays bool   // the sandbox stays on
	}{
		{name: "inline settings", opts: Config{Settings: `{"sandbox": {"enabled": false}}`}},
		{name: "Options.Sandbox", opts: Config{Sandbox: &SandboxSettings{Enabled: false}}},
		// A cloned repository may not turn it off (settings.Sandbox says
		// why): the write stays refused.
		{name: "project settings may not", opts: Config{}, file: `{"sandbox": {"enabled": false}}`, stays: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := filepath.Join(w.out, "f")
			os.Remove(target)
			os.RemoveAll(filepath.Join(w.cwd, ".claude"))
			t.Cleanup(func() { os.RemoveAll(filepath.Join(w.cwd, ".claude")) })
			var s *Session
			if tt.file == "" {
				s = w.session(t, tt.opts)
			} else {
				if err := os.MkdirAll(filepath.Join(w.cwd, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(w.cwd, ".claude", "settings.json"), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
				p, _ := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: "http://127.0.0.1:1"})
				var err error
				s, err = NewSession(context.Background(), &Config{Provider: p, Cwd: w.cwd, NoSessionPersistence: true,
					SettingSources: []settings.SettingSource{settings.Project}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Close)
			}
			if tt.stays {
				if !s.sandboxEnabled() {
					t.Error("a project settings file turned the sandbox off")
				}
				if res := bash(t, s, map[string]any{"command": "touch " + target}); exists(target) {
					t.Errorf("a project settings file turned the sandbox off: the outside write worked (%q)", res.Text())
				}
				return
			}
			if s.sandboxEnabled() || s.initMessage().Init.SandboxEnabled {
				t.Error("sandbox_enabled with the sandbox turned off")
			}
			if res := bash(t, s, map[string]any{"command": "touch " + target}); !exists(target) {
				t.Errorf("with the sandbox off the outside write failed: %q", res.Text())
			}
		})
	}
}

// TestSandboxDefaultUnavailable: where the kernel has no Landlock, the
// default sandbox is reported once in the stream (system/init's
// sandbox_unavailable and one sandbox notification) and in the debug log,
// and commands run; with the sandbox turned off nothing is said.
func TestSandboxDefaultUnavailable(t *testing.T) {
	old := sandboxAvailable
	sandboxAvailable = func() (int, error) {
		return 0, fmt.Errorf("%w: no Landlock in this test kernel", sandbox.ErrUnavailable)
	}
	t.Cleanup(func() { sandboxAvailable = old })

	run := func(t *testing.T, opts Config) (inits []*message.System, notices []string, log string) {
		cwd := t.TempDir()
		srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
		p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		var mu sync.Mutex
		opts.Provider, opts.Cwd, opts.SettingSources = p, cwd, []settings.SettingSource{}
		opts.NoSessionPersistence, opts.Tools = true, []string{"Bash"}
		opts.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
		c, err := NewClient(&opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, prompt := range []string{"first", "second"} {
			msgs, err := collect(c.Query(context.Background(), prompt))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				sm, ok := m.(*message.System)
				switch {
				case !ok:
				case sm.Init != nil:
					inits = append(inits, sm)
				case sm.Subtype == "notification" && string(sm.Data["key"]) == `"sandbox"`:
					var text string
					json.Unmarshal(sm.Data["text"], &text)
					notices = append(notices, text)
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return inits, notices, buf.String()
	}

	t.Run("default", func(t *testing.T) {
		inits, notices, log := run(t, Config{})
		if len(inits) != 2 {
			t.Fatalf("%d init messages, want 2", len(inits))
		}
		for _, in := range inits {
			if in.Init.SandboxEnabled || !strings.Contains(in.Init.SandboxUnavailable, "no Landlock in this test kernel") {
				t.Errorf("init: sandbox_enabled %v, sandbox_unavailable %q", in.Init.SandboxEnabled, in.Init.SandboxUnavailable)
			}
		}
		if len(notices) != 1 || !strings.Contains(notices[0], "The sandbox cannot run here") ||
			!strings.Contains(notices[0], "no Landlock in this test kernel") {
			t.Errorf("sandbox notices = %q, want one saying the sandbox cannot run", notices)
		}
		if n := strings.Count(log, "The sandbox cannot run here"); n != 1 || !strings.Contains(log, "tag=sandbox") {
			t.Errorf("the debug log has the notice %d times, want once:\n%s", n, log)
		}
		w := newSandboxWorld(t)
		if res := bash(t, w.session(t, Config{}), map[string]any{"command": "touch " + w.out + "/f"}); !exists(filepath.Join(w.out, "f")) {
			t.Errorf("without Landlock the command did not run unsandboxed: %q", res.Text())
		}
	})
	t.Run("turned off", func(t *testing.T) {
		inits, notices, log := run(t, Config{Sandbox: &SandboxSettings{}})
		if len(notices) != 0 || strings.Contains(log, "cannot run here") {
			t.Errorf("a sandbox turned off is reported as unavailable: %q\n%s", notices, log)
		}
		if len(inits) == 0 || inits[0].Init.SandboxUnavailable != "" {
			t.Errorf("init reports an unavailable sandbox that is off: %+v", inits)
		}
	})
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestSandboxDefaultNoAutoAllow: autoAllowBashIfSandboxed applies only to
// a sandbox the settings enable; a Bash call that is asked without a
// sandbox is still asked (and, with nobody to ask, denied) under the
// default one.
func TestSandboxDefaultNoAutoAllow(t *testing.T) {
	needSandbox(t)
	w := newSandboxWorld(t)
	decide := func(opts Config) (engine.Decision, *Session) {
		s := w.session(t, opts)
		raw, _ := json.Marshal(map[string]any{"command": "make build"})
		return s.authorize(context.Background(), &engine.ToolCall{ID: "toolu_1", Name: "Bash", Input: raw, Tool: tools.Bash()}), s
	}
	d, s := decide(Config{})
	if !s.sandboxEnabled() {
		t.Fatal("the default sandbox is not on")
	}
	if d.Allow {
		t.Errorf("the default sandbox auto-allowed an asked Bash call (%s: %s)", d.ReasonType, d.Message)
	}
	// The control: the same call with the sandbox enabled is allowed.
	if d, _ := decide(Config{Sandbox: &SandboxSettings{Enabled: true}}); !d.Allow {
		t.Errorf("an enabled sandbox did not auto-allow the call (%s: %s): this test cannot fail", d.ReasonType, d.Message)
	}
}

// TestSandboxMetadataUnprotectedIsReported: where sandboxed commands'
// metadata changes cannot be confined (no CAP_SYS_ADMIN), the session
// says so in its sandbox notice; where they can, it says nothing.
func TestSandboxMetadataUnprotectedIsReported(t *testing.T) {
	needSandbox(t)
	for _, tc := range []struct {
		name      string
		protected bool
	}{{"protected", true}, {"unprotected", false}} {
		t.Run(tc.name, func(t *testing.T) {
			old := sandboxMetadata
			sandboxMetadata = func() (bool, error) {
				if tc.protected {
					return true, nil
				}
				return false, fmt.Errorf("%w: no CAP_SYS_ADMIN in this test", sandbox.ErrNoMetadataProtection)
			}
			t.Cleanup(func() { sandboxMetadata = old })
			w := newSandboxWorld(t)
			s := w.session(t, Config{})
			n := s.sandboxNotice()
			switch {
			case tc.protected && n != nil:
				t.Errorf("a notice with metadata protected: %s", n.Data["text"])
			case !tc.protected && (n == nil || !strings.Contains(string(n.Data["text"]), "file modes")):
				t.Errorf("no notice that metadata is not confined: %v", n)
			}
		})
	}
}

// collect gathers a stream's messages up to its first error.
func collect(s Stream) ([]Message, error) {
	var out []Message
	for m, err := range s {
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
