package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// keysRun is one scripted session whose Bash calls run commands in
// order, with the given inline (--settings) settings and, when managed is
// not "", that managed policy.
type keysRun struct {
	results []string
	notice  string // the sandbox notification's text
	err     error
}

func runSandboxKeys(t *testing.T, cwd, flag, managed string, commands ...string) keysRun {
	t.Helper()
	mpath := filepath.Join(t.TempDir(), "managed-settings.json")
	if managed != "" {
		if err := os.WriteFile(mpath, []byte(managed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(conversation.SetSandboxKeysManagedPathForTest(mpath))
	t.Cleanup(conversation.SetForceAllowForTest(true))
	var script []agentlooptest.Reply
	for i, c := range commands {
		script = append(script, agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", i), "Bash", map[string]any{"command": c}))
	}
	script = append(script, agentlooptest.Text("done"))
	srv := agentlooptest.NewTB(t, script...)
	msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: cwd, Tools: []string{"Bash"}, SettingSources: []settings.SettingSource{}, Settings: flag,
		NoSessionPersistence: true}).Collect()
	out := keysRun{err: err}
	if err != nil {
		return out
	}
	for _, m := range msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "notification" && string(s.Data["key"]) == `"sandbox"` {
			out.notice = string(s.Data["text"])
		}
	}
	reqs := srv.Requests()
	for i := range commands {
		if len(reqs) < i+2 {
			t.Fatalf("%d requests for %d commands", len(reqs), len(commands))
		}
		r, ok := reqs[i+1].ToolResult(fmt.Sprintf("toolu_%d", i))
		if !ok {
			t.Fatalf("no result for command %d", i)
		}
		out.results = append(out.results, r.ResultText())
	}
	return out
}

func needKernelSandbox(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
}

// keysProject makes a project directory and, outside it, a secret file.
func keysProject(t *testing.T) (cwd, secret string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, secret = filepath.Join(root, "project"), filepath.Join(root, "creds", "token")
	for _, d := range []string{cwd, filepath.Dir(secret)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("TOKEN-S3CRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cwd, secret
}

// TestSandboxCredentialsFileDenied: a sandbox.credentials.files entry,
// deny or mask (enforced as deny, and said so once in the sandbox
// notice), keeps a sandboxed Bash command from reading the file, with the
// default sandbox and with the enabled one. Without the entry the same
// command reads it: the test can fail.
func TestSandboxCredentialsFileDenied(t *testing.T) {
	needKernelSandbox(t)
	for _, tc := range []struct{ name, enabled, mode string }{
		{"default sandbox, deny", "", "deny"},
		{"enabled sandbox, mask", `"enabled": true,`, "mask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd, secret := keysProject(t)
			flag := fmt.Sprintf(`{"sandbox": {%s "credentials": {"files": [{"path": %q, "mode": %q}]}}}`, tc.enabled, secret, tc.mode)
			r := runSandboxKeys(t, cwd, flag, "", "cat "+secret)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if strings.Contains(r.results[0], "TOKEN-S3CRET") || !strings.Contains(r.results[0], "Permission denied") {
				t.Errorf("cat of a denied credentials file said %q", r.results[0])
			}
			if got := strings.Contains(r.notice, `mode \"mask\" is enforced as \"deny\"`); got != (tc.mode == "mask") {
				t.Errorf("mask notice given = %v, want %v: %q", got, tc.mode == "mask", r.notice)
			}
			control := runSandboxKeys(t, cwd, fmt.Sprintf(`{"sandbox": {%s "filesystem": {}}}`, tc.enabled), "", "cat "+secret)
			if control.err != nil || !strings.Contains(control.results[0], "TOKEN-S3CRET") {
				t.Errorf("without the entry the file was not read (%v, %q): this test cannot fail", control.err, control.results)
			}
		})
	}
}

// TestSandboxCredentialsEnvVarUnset: a sandbox.credentials.envVars entry
// (deny, or mask enforced as deny) removes the variable from a sandboxed
// command's environment; without it the command sees the value.
func TestSandboxCredentialsEnvVarUnset(t *testing.T) {
	needKernelSandbox(t)
	t.Setenv("AGENTLOOP_KEYS_TOKEN", "ENV-S3CRET")
	t.Setenv("AGENTLOOP_KEYS_OTHER", "kept")
	cwd, _ := keysProject(t)
	cmd := `echo "[${AGENTLOOP_KEYS_TOKEN-unset}] [${AGENTLOOP_KEYS_OTHER-unset}]"`
	for _, mode := range []string{"deny", "mask"} {
		flag := fmt.Sprintf(`{"sandbox": {"credentials": {"envVars": [{"name": "AGENTLOOP_KEYS_TOKEN", "mode": %q}]}}}`, mode)
		r := runSandboxKeys(t, cwd, flag, "", cmd)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !strings.Contains(r.results[0], "[unset] [kept]") {
			t.Errorf("%s: the command printed %q, want the variable unset and the other kept", mode, r.results[0])
		}
	}
	control := runSandboxKeys(t, cwd, `{"sandbox": {"filesystem": {}}}`, "", cmd)
	if control.err != nil || !strings.Contains(control.results[0], "[ENV-S3CRET] [kept]") {
		t.Errorf("without the entry the command printed %q (%v): this test cannot fail", control.results, control.err)
	}
}

// TestSandboxManagedDomainsOnly: with the managed policy's
// allowManagedDomainsOnly, a domain that --settings allows (in
// allowedDomains or as a WebFetch allow rule) is refused by the
// sandbox's proxy: a curl through it to a loopback server named
// "localhost" does not get there. Without the managed key it does.
func TestSandboxManagedDomainsOnly(t *testing.T) {
	needKernelSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	var hits atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "REACHED-THE-SERVER")
	}))
	t.Cleanup(web.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(web.URL, "http://"))
	cmd := "curl -sS --max-time 10 http://localhost:" + port + "/"
	cwd, _ := keysProject(t)
	managedOnly := `{"sandbox": {"network": {"allowManagedDomainsOnly": true, "allowedDomains": ["managed.invalid"]}}}`
	for _, flag := range []string{
		`{"sandbox": {"enabled": true, "network": {"allowedDomains": ["localhost"]}}}`,
		`{"sandbox": {"enabled": true}, "permissions": {"allow": ["WebFetch(domain:localhost)"]}}`,
	} {
		hits.Store(0)
		r := runSandboxKeys(t, cwd, flag, managedOnly, cmd)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if strings.Contains(r.results[0], "REACHED-THE-SERVER") || hits.Load() != 0 {
			t.Errorf("%s: under allowManagedDomainsOnly the command reached the server: %q", flag, r.results[0])
		}
		control := runSandboxKeys(t, cwd, flag, strings.Replace(managedOnly, "true", "false", 1), cmd)
		if control.err != nil || !strings.Contains(control.results[0], "REACHED-THE-SERVER") {
			t.Errorf("%s: without allowManagedDomainsOnly the server was not reached (%v, %q): this test cannot fail",
				flag, control.err, control.results)
		}
	}
}

// TestSandboxHTTPProxyPort: with network.httpProxyPort, a sandboxed
// command's proxy variables name that port, and its requests reach the
// user's proxy listening there (a loopback server standing in for it)
// while other loopback ports stay closed; with the key from the project
// file, it is ignored.
func TestSandboxHTTPProxyPort(t *testing.T) {
	needKernelSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	var got atomic.Value
	userProxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.String())
		io.WriteString(w, "VIA-THE-USER-PROXY")
	}))
	t.Cleanup(userProxy.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(userProxy.URL, "http://"))
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "OTHER-PORT-REACHED")
	}))
	t.Cleanup(other.Close)
	cwd, _ := keysProject(t)
	flag := `{"sandbox": {"enabled": true, "network": {"httpProxyPort": ` + port + `}}}`
	r := runSandboxKeys(t, cwd, flag, "", `echo "[$HTTPS_PROXY] [$http_proxy]"`,
		"curl -sS --max-time 10 http://example.invalid/path",
		"curl -sS --max-time 5 --noproxy '*' "+other.URL+"/")
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := "http://127.0.0.1:" + port
	if !strings.Contains(r.results[0], "["+want+"] ["+want+"]") {
		t.Errorf("proxy variables %q, want %s", r.results[0], want)
	}
	if !strings.Contains(r.results[1], "VIA-THE-USER-PROXY") || got.Load() != "http://example.invalid/path" {
		t.Errorf("the request did not go through the user's proxy: %q (proxy saw %v)", r.results[1], got.Load())
	}
	if strings.Contains(r.results[2], "OTHER-PORT-REACHED") {
		t.Errorf("a loopback port other than the user's proxy was reached: %q", r.results[2])
	}

	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(flag), 0o644); err != nil {
		t.Fatal(err)
	}
	// The project file is read only when the project source is; the run
	// above used none.
	t.Cleanup(conversation.SetForceAllowForTest(true))
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_p", "Bash", map[string]any{"command": `echo "[$HTTPS_PROXY]"`}),
		agentlooptest.Text("done"))
	if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: cwd, Tools: []string{"Bash"}, SettingSources: []settings.SettingSource{settings.Project},
		NoSessionPersistence: true}).Collect(); err != nil {
		t.Fatal(err)
	}
	pr, _ := srv.Requests()[1].ToolResult("toolu_p")
	if strings.Contains(pr.ResultText(), port) {
		t.Errorf("a project file's httpProxyPort was honoured: %q", pr.ResultText())
	}
}

// TestSandboxKeysRefused: keys agentloop cannot honour stop the session
// from starting, with an error that wraps ErrInvalidOption and names the
// key.
func TestSandboxKeysRefused(t *testing.T) {
	cwd, _ := keysProject(t)
	for _, tc := range []struct{ flag, managed, key string }{
		{`{"sandbox": {"enabled": true, "network": {"socksProxyPort": 1080}}}`, "", "sandbox.network.socksProxyPort"},
		{`{}`, `{"sandbox": {"credentials": {"awsPairs": []}}}`, "sandbox.credentials.awsPairs"},
		{`{}`, `{"sandbox": {"credentials": {"sigv4": {}}}}`, "sandbox.credentials.sigv4"},
	} {
		r := runSandboxKeys(t, cwd, tc.flag, tc.managed)
		if !errors.Is(r.err, agentloop.ErrInvalidOption) || !strings.Contains(fmt.Sprint(r.err), tc.key) {
			t.Errorf("%s %s: err = %v, want ErrInvalidOption naming %s", tc.flag, tc.managed, r.err, tc.key)
		}
	}
}
