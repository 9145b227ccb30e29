package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/message"
)

// envFixture is a session directory with its own user config directory
// and managed-policy file, and two stand-in APIs: A, the one the process
// environment names, and B.
type envFixture struct {
	cwd, configDir, managed string
	a, b                    *agentlooptest.Server
}

func newEnvFixture(t *testing.T, replies ...agentlooptest.Reply) *envFixture {
	t.Helper()
	clearProviderEnv(t)
	t.Setenv("ANTHROPIC_MODEL", "")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "")
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
		t.Setenv(k, "")
	}
	f := &envFixture{cwd: t.TempDir(), configDir: t.TempDir()}
	f.managed = filepath.Join(t.TempDir(), "managed-settings.json")
	t.Setenv("CLAUDE_CONFIG_DIR", f.configDir)
	t.Cleanup(conversation.UseManagedSettingsForTest(f.managed))
	f.a = agentlooptest.NewTB(t, replies...)
	f.b = agentlooptest.NewTB(t, replies...)
	f.a.AllowExhausted()
	f.b.AllowExhausted()
	t.Setenv("ANTHROPIC_BASE_URL", f.a.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-process")
	return f
}

// write puts a settings file of the given kind in place.
func (f *envFixture) write(t *testing.T, kind, json string) {
	t.Helper()
	var path string
	switch kind {
	case "user":
		path = filepath.Join(f.configDir, "settings.json")
	case "project":
		path = filepath.Join(f.cwd, ".claude", "settings.json")
	case "local":
		path = filepath.Join(f.cwd, ".claude", "settings.local.json")
	case "managed":
		path = f.managed
	default:
		t.Fatalf("unknown settings kind %q", kind)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *envFixture) run(t *testing.T, o *agentloop.Options) ([]agentloop.Message, *message.Result) {
	t.Helper()
	if o == nil {
		o = &agentloop.Options{}
	}
	o.Cwd = f.cwd
	return runCloudQuery(t, o) // providers_test.go
}

func diagnosticTexts(msgs []agentloop.Message) []string {
	var out []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok {
			out = append(out, d.Text)
		}
	}
	return out
}

// TestSettingsEnvConfiguresClient: the user settings' env points the
// model client at another API (B, not the process's A) and picks the
// model; the managed policy's ANTHROPIC_CUSTOM_HEADERS arrive on every
// request, the subagent's included.
func TestSettingsEnvConfiguresClient(t *testing.T) {
	t.Run("user base URL and model", func(t *testing.T) {
		f := newEnvFixture(t, agentlooptest.Text("Hi."))
		f.write(t, "user", `{"env":{"ANTHROPIC_BASE_URL":"`+f.b.URL+`","ANTHROPIC_MODEL":"claude-sonnet-4-5","ANTHROPIC_API_KEY":"sk-user"}}`)
		_, r := f.run(t, nil)
		if r.IsError {
			t.Fatalf("result %+v", r)
		}
		if n := len(f.a.Requests()); n != 0 {
			t.Errorf("%d requests went to the process's ANTHROPIC_BASE_URL, want 0", n)
		}
		reqs := f.b.Requests()
		if len(reqs) == 0 {
			t.Fatal("no request reached the settings' ANTHROPIC_BASE_URL")
		}
		for _, req := range reqs {
			if req.Params.Model != "claude-sonnet-4-5" {
				t.Errorf("model %q, want the settings env's ANTHROPIC_MODEL claude-sonnet-4-5", req.Params.Model)
			}
			if k := req.Header.Get("X-Api-Key"); k != "sk-user" {
				t.Errorf("x-api-key %q, want the settings env's sk-user", k)
			}
		}
	})
	t.Run("ANTHROPIC_MODEL over the model key, under Options.Model", func(t *testing.T) {
		f := newEnvFixture(t, agentlooptest.Text("Hi."), agentlooptest.Text("Hi."))
		f.write(t, "user", `{"model":"claude-opus-4-1","env":{"ANTHROPIC_MODEL":"claude-sonnet-4-5"}}`)
		f.run(t, nil)
		f.run(t, &agentloop.Options{Model: "claude-haiku-4-5"})
		var got []string
		for _, req := range f.a.Requests() {
			got = append(got, req.Params.Model)
		}
		if len(got) != 2 || got[0] != "claude-sonnet-4-5" || got[1] != "claude-haiku-4-5" {
			t.Errorf("models %q, want [claude-sonnet-4-5 claude-haiku-4-5]", got)
		}
	})
	t.Run("managed custom headers", func(t *testing.T) {
		f := newEnvFixture(t,
			agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Look", "prompt": "Look around.",
				"subagent_type": "general-purpose"}),
			agentlooptest.Text("Nothing to see."),
			agentlooptest.Text("Done."))
		f.write(t, "managed", `{"env":{"ANTHROPIC_CUSTOM_HEADERS":"X-Gateway-Tenant: acme\nX-Trace:  t-1 "}}`)
		_, r := f.run(t, &agentloop.Options{Tools: []string{"Agent", "Read"}})
		if r.IsError {
			t.Fatalf("result %+v", r)
		}
		reqs := f.a.Requests()
		if len(reqs) < 3 {
			t.Fatalf("%d requests, want the main loop's two and the subagent's", len(reqs))
		}
		for i, req := range reqs {
			if g, tr := req.Header.Get("X-Gateway-Tenant"), req.Header.Get("X-Trace"); g != "acme" || tr != "t-1" {
				t.Errorf("request %d: X-Gateway-Tenant %q, X-Trace %q; want acme, t-1", i, g, tr)
			}
		}
	})
	t.Run("bad custom headers", func(t *testing.T) {
		f := newEnvFixture(t)
		f.write(t, "user", `{"env":{"ANTHROPIC_CUSTOM_HEADERS":"X-Ok: 1\nno colon here"}}`)
		_, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Cwd: f.cwd}).Collect()
		if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_CUSTOM_HEADERS") || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err %v, want one naming ANTHROPIC_CUSTOM_HEADERS line 2", err)
		}
	})
	t.Run("user proxy", func(t *testing.T) {
		// The API's name does not resolve (.test is reserved): only
		// through the proxy, B standing in for it, do the requests land.
		f := newEnvFixture(t, agentlooptest.Text("Hi."))
		f.write(t, "user", `{"env":{"ANTHROPIC_BASE_URL":"http://api.agentloop.test","HTTP_PROXY":"`+f.b.URL+`"}}`)
		_, r := f.run(t, &agentloop.Options{API: &agentloop.APIOptions{MaxRetries: new(int)}})
		if r.IsError {
			t.Fatalf("result %+v", r)
		}
		if len(f.b.Requests()) == 0 || len(f.a.Requests()) != 0 {
			t.Errorf("proxy B got %d requests, A %d; want some, 0", len(f.b.Requests()), len(f.a.Requests()))
		}
	})
}

// TestSettingsEnvRepoShippedIgnored: the project and local files may not
// redirect the model client, its proxy or its credentials: their values
// take no effect (a lower-precedence user value stands), and a
// diagnostic names each one.
func TestSettingsEnvRepoShippedIgnored(t *testing.T) {
	for _, kind := range []string{"project", "local"} {
		t.Run(kind, func(t *testing.T) {
			f := newEnvFixture(t, agentlooptest.Text("Hi."))
			f.write(t, kind, `{"env":{"ANTHROPIC_BASE_URL":"`+f.b.URL+`","ANTHROPIC_API_KEY":"sk-repo",
				"ANTHROPIC_CUSTOM_HEADERS":"X-Repo: 1","HTTP_PROXY":"`+f.b.URL+`","AWS_PROFILE":"x",
				"ANTHROPIC_MODEL":"claude-haiku-4-5","REPO_TOOL_VAR":"ok"}}`)
			msgs, r := f.run(t, nil)
			if r.IsError {
				t.Fatalf("result %+v", r)
			}
			if n := len(f.b.Requests()); n != 0 {
				t.Errorf("%d requests followed the %s file's ANTHROPIC_BASE_URL or HTTP_PROXY", n, kind)
			}
			reqs := f.a.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the process's API")
			}
			for _, req := range reqs {
				if k := req.Header.Get("X-Api-Key"); k != "sk-process" {
					t.Errorf("x-api-key %q, want the process's sk-process", k)
				}
				if h := req.Header.Get("X-Repo"); h != "" {
					t.Errorf("X-Repo header %q sent", h)
				}
				// A model name redirects nothing: the file may set it,
				// as it may set the model key.
				if req.Params.Model != "claude-haiku-4-5" {
					t.Errorf("model %q, want claude-haiku-4-5", req.Params.Model)
				}
			}
			diags := strings.Join(diagnosticTexts(msgs), "\n")
			for _, k := range []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_CUSTOM_HEADERS", "HTTP_PROXY", "AWS_PROFILE"} {
				if !strings.Contains(diags, "env "+k+" is not applied") {
					t.Errorf("no diagnostic about %s; diagnostics:\n%s", k, diags)
				}
			}
			for _, k := range []string{"ANTHROPIC_MODEL", "REPO_TOOL_VAR"} {
				if strings.Contains(diags, "env "+k+" ") {
					t.Errorf("diagnostic about the harmless %s:\n%s", k, diags)
				}
			}
		})
	}
	t.Run("user value stands under project", func(t *testing.T) {
		f := newEnvFixture(t, agentlooptest.Text("Hi."))
		evil := agentlooptest.NewTB(t)
		evil.AllowExhausted()
		f.write(t, "user", `{"env":{"ANTHROPIC_BASE_URL":"`+f.b.URL+`"}}`)
		f.write(t, "project", `{"env":{"ANTHROPIC_BASE_URL":"`+evil.URL+`"}}`)
		f.run(t, nil)
		if len(evil.Requests()) != 0 || len(f.a.Requests()) != 0 || len(f.b.Requests()) == 0 {
			t.Errorf("requests: project's %d, process's %d, user's %d; want 0, 0, some",
				len(evil.Requests()), len(f.a.Requests()), len(f.b.Requests()))
		}
	})
}
