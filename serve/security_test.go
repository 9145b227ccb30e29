package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
)

// Without a token, or with an unknown one, every /v1 call is 401.
func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	for _, tok := range []string{"", "wrong"} {
		code, body := e.do("GET", "/v1/sessions", tok, nil)
		if code != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
			t.Errorf("token %q: %d %s, want 401 unauthorized", tok, code, body)
		}
	}
	code, _ := e.do("POST", "/v1/sessions", "wrong", map[string]any{})
	if code != http.StatusUnauthorized {
		t.Errorf("create with a wrong token: %d, want 401", code)
	}
}

// Tenant B cannot see or drive tenant A's session: every endpoint answers
// 404, as for a session that does not exist, and A's session is untouched.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t, nil, agentlooptest.Text("hello A"))
	id := e.create(tokenA, map[string]any{"title": "secret"})
	p := "/v1/sessions/" + id
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", p, nil},
		{"PATCH", p, map[string]any{"title": "pwned"}},
		{"POST", p + "/messages", map[string]string{"text": "hi"}},
		{"POST", p + "/interrupt", nil},
		{"POST", p + "/fork", nil},
		{"POST", p + "/permissions/perm_x", map[string]string{"behavior": "allow"}},
		{"GET", p + "/events", nil},
		{"DELETE", p, nil},
	} {
		code, body := e.do(c.method, c.path, tokenB, c.body)
		if code != http.StatusNotFound || !strings.Contains(string(body), `"not_found"`) {
			t.Errorf("tenant B %s %s: %d %s, want 404 not_found", c.method, c.path, code, body)
		}
	}
	if l := e.must(http.StatusOK, "GET", "/v1/sessions", tokenB, nil); len(l["sessions"].([]any)) != 0 {
		t.Errorf("tenant B lists %v", l)
	}
	rec := e.must(http.StatusOK, "GET", p, tokenA, nil)
	if rec["title"] != "secret" {
		t.Errorf("A's session after B's attempts: %v", rec)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("B's message reached the model (%d requests)", n)
	}
}

// Bad input is refused with a clear message and stores nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	outside := t.TempDir()
	// A symbolic link inside tenant A's root pointing out of it.
	probe := e.create(tokenA, map[string]any{"cwd": "probe"})
	e.must(http.StatusNoContent, "DELETE", "/v1/sessions/"+probe, tokenA, nil)
	root := tenantRootOf(t, e, "probe")
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	big := `{"title":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, c := range []struct {
		name string
		body any
		code int
		want string
	}{
		{"malformed JSON", `{"title":`, 400, "malformed JSON"},
		{"not an object", `[1]`, 400, "malformed JSON"},
		{"two values", `{} {}`, 400, "more than one"},
		{"unknown field", `{"title":"a","colour":"red"}`, 400, `unknown field \"colour\" in the request body`},
		{"2 MiB body", big, 413, "larger than"},
		{"cwd with ..", map[string]any{"cwd": "../x"}, 400, "leaves the session root"},
		{"cwd with inner ..", map[string]any{"cwd": "a/../../x"}, 400, "leaves the session root"},
		{"cwd with harmless ..", map[string]any{"cwd": "a/../b"}, 400, `must not contain`},
		{"cwd absolute", map[string]any{"cwd": "/etc"}, 400, "absolute"},
		{"cwd via a symlink out", map[string]any{"cwd": "link/sub"}, 400, "symbolic link"},
		{"cwd symlink itself", map[string]any{"cwd": "link"}, 400, "symbolic link"},
		{"bad permission mode", map[string]any{"permission_mode": "yolo"}, 400, "permission_mode"},
		{"stdio MCP server", map[string]any{"mcp_servers": map[string]any{"x": map[string]any{"command": "sh"}}}, 400, "stdio"},
		{"negative max_turns", map[string]any{"max_turns": -1}, 400, "max_turns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := e.do("POST", "/v1/sessions", tokenA, c.body)
			if code != c.code || !strings.Contains(string(body), c.want) || !strings.Contains(string(body), `"error"`) {
				t.Errorf("%d %.300s, want %d with %q", code, body, c.code, c.want)
			}
		})
	}
	if l := e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil); len(l["sessions"].([]any)) != 0 {
		t.Errorf("sessions stored after bad input: %v", l)
	}
	if _, err := os.Stat(filepath.Join(outside, "sub")); err == nil {
		t.Error("a directory was created outside the root")
	}
	// Bad bodies of the other endpoints.
	id := e.create(tokenA, nil)
	for _, c := range []struct {
		path string
		body any
		code int
	}{
		{"/messages", `{"text":`, 400},
		{"/messages", `{"text":"hi","extra":1}`, 400},
		{"/messages", `{"text":""}`, 400},
		{"/messages", `{"text":"` + strings.Repeat("y", 2<<20) + `"}`, 413},
		{"/permissions/p", `{"behavior":"allow","x":1}`, 400},
	} {
		code, body := e.do("POST", "/v1/sessions/"+id+c.path, tokenA, c.body)
		if code != c.code {
			t.Errorf("POST %s %.60s: %d %.200s, want %d", c.path, c.body, code, body, c.code)
		}
	}
	code, body := e.do("PATCH", "/v1/sessions/"+id, tokenA, `{"tags":"notalist"}`)
	if code != 400 {
		t.Errorf("PATCH tags string: %d %s", code, body)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("bad messages reached the model (%d requests)", n)
	}
}

// tenantRootOf returns tenant A's root, found from a created session's cwd.
func tenantRootOf(t *testing.T, e *env, rel string) string {
	t.Helper()
	var root string
	filepath.WalkDir(e.srvRoot(), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == rel {
			root = filepath.Dir(p)
			return filepath.SkipAll
		}
		return nil
	})
	if root == "" {
		t.Fatalf("no directory %s under the root", rel)
	}
	return root
}

var _ = serve.HashToken
