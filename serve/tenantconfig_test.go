package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/settings"
)

// hookSettings is a settings file whose SessionStart command hook creates
// hook-ran in its working directory (the session's) and then outside
// it, at marker.
func hookSettings(marker string) string {
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": []any{map[string]any{
		"hooks": []any{map[string]any{"type": "command", "command": "touch hook-ran; touch '" + marker + "'"}}}}}})
	return string(b)
}

const memorySentinel = "SENTINEL-TENANT-CLAUDE-MD"

// A tenant writes configuration into its working directory — a
// .claude/settings.json (through the Write tool, answering its own
// permission prompt over HTTP, or directly), a .claude/settings.local.json,
// a CLAUDE.md — and opens a second session there. By default none of it is
// loaded: the SessionStart command hook does not run on the server and
// CLAUDE.md does not reach the model. When the operator opts in to the
// project or local source, the file is loaded (so the rows that expect
// nothing can fail), but its hook runs inside the tenant's sandbox: it
// can write its own working directory and nothing outside it, and not at
// all when the operator's deny rules cover its command.
func TestTenantConfigNotLoaded(t *testing.T) {
	for _, c := range []struct {
		name    string
		sources []settings.SettingSource // Config.SettingSources
		file    string                   // settings file under the cwd
		viaTool bool                     // written by session 1's Write tool
		want    bool                     // the hook runs, CLAUDE.md is sent
		deny    bool                     // the operator denies Bash(touch *)
	}{
		{name: "default, project file by the Write tool", file: ".claude/settings.json", viaTool: true},
		{name: "default, project file", file: ".claude/settings.json"},
		{name: "default, local file", file: ".claude/settings.local.json"},
		{name: "user only, project file", sources: []settings.SettingSource{settings.User}, file: ".claude/settings.json"},
		{name: "none, project file", sources: []settings.SettingSource{}, file: ".claude/settings.json"},
		{name: "opt-in project, by the Write tool", sources: []settings.SettingSource{settings.User, settings.Project},
			file: ".claude/settings.json", viaTool: true, want: true},
		{name: "opt-in project", sources: []settings.SettingSource{settings.User, settings.Project, settings.Local},
			file: ".claude/settings.json", want: true},
		{name: "opt-in local", sources: []settings.SettingSource{settings.Local},
			file: ".claude/settings.local.json", want: true},
		{name: "opt-in project, operator denies the command", sources: []settings.SettingSource{settings.Project},
			file: ".claude/settings.json", deny: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "hook-ran")
			content := hookSettings(marker)
			e := newEnv(t, func(cfg *serve.Config) {
				cfg.SettingSources = c.sources
				if c.deny {
					if cfg.Base == nil {
						cfg.Base = &agentloop.Options{}
					}
					cfg.Base.Settings = `{"permissions": {"deny": ["Bash(touch *)"]}}`
				}
			})

			// Session 1 writes the tenant's configuration.
			s1 := e.create(tokenA, map[string]any{"cwd": "proj", "tools": []string{"Write"}, "permission_mode": "default"})
			cwd := filepath.Join(tenantRootOf(t, e, "proj"), "proj")
			if c.viaTool {
				e.model.Push(
					agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": filepath.Join(cwd, c.file), "content": content}),
					agentlooptest.Text("Written."))
				ev := e.subscribe(s1, tokenA, "")
				e.must(http.StatusAccepted, "POST", "/v1/sessions/"+s1+"/messages", tokenA, map[string]string{"text": "write it"})
				req := permissionRequest(t, ev)
				if req["tool_name"] != "Write" {
					t.Fatalf("permission_request %v, want Write", req)
				}
				e.must(http.StatusOK, "POST", "/v1/sessions/"+s1+"/permissions/"+req["request_id"].(string), tokenA,
					map[string]string{"behavior": "allow"})
				ev.until(isResult)
				got, err := os.ReadFile(filepath.Join(cwd, c.file))
				if err != nil || string(got) != content {
					t.Fatalf("the Write tool left %q, %v; want the settings", got, err)
				}
			} else {
				if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(cwd, c.file), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(cwd, "CLAUDE.md"), []byte(memorySentinel), 0o644); err != nil {
				t.Fatal(err)
			}

			// Session 2 starts in the same working directory.
			e.model.Push(agentlooptest.Text("Hello."))
			s2 := e.create(tokenA, map[string]any{"cwd": "proj"})
			ev := e.subscribe(s2, tokenA, "")
			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+s2+"/messages", tokenA, map[string]string{"text": "hi"})
			ev.until(isResult)

			_, err := os.Stat(filepath.Join(cwd, "hook-ran"))
			_, escaped := os.Stat(marker)
			reqs := e.model.Requests()
			memory := strings.Contains(string(reqs[len(reqs)-1].Body), memorySentinel)
			wantMemory := slices.Contains(c.sources, settings.Project)
			got := map[string]bool{"hook ran": err == nil, "CLAUDE.md sent": memory, "hook wrote outside": escaped == nil}
			want := map[string]bool{"hook ran": c.want, "CLAUDE.md sent": wantMemory, "hook wrote outside": false}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tenant configuration loaded (-want +got):\n%s", diff)
			}
		})
	}
}

// A request cannot name settings or their sources: the create body has no
// such field (400 unknown field), and nothing is stored.
func TestTenantCannotWidenSettings(t *testing.T) {
	e := newEnv(t, nil)
	for _, body := range []string{
		`{"setting_sources":["project"]}`,
		`{"settingSources":["project","local"]}`,
		`{"settings":"{\"hooks\":{}}"}`,
		`{"hooks":{"SessionStart":[]}}`,
		`{"plugins":[{"type":"local","path":"."}]}`,
	} {
		code, out := e.do("POST", "/v1/sessions", tokenA, body)
		if code != http.StatusBadRequest || !strings.Contains(string(out), "unknown field") {
			t.Errorf("%s: %d %s, want 400 unknown field", body, code, out)
		}
	}
	if l := e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil); len(l["sessions"].([]any)) != 0 {
		t.Errorf("sessions stored: %v", l)
	}
}

// Setting sources are the server's Config.SettingSources only: one in
// Config.Base is refused (it would silently mean something else), as is
// an unknown source.
func TestSettingSourcesConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  serve.Config
		want string
	}{
		{"Base.SettingSources", serve.Config{Base: &agentloop.Options{SettingSources: []settings.SettingSource{settings.Project}}},
			"Base.SettingSources is not used"},
		{"unknown source", serve.Config{SettingSources: []settings.SettingSource{"policy"}}, `unknown source "policy"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Root, c.cfg.DataDir, c.cfg.Tenants = t.TempDir(), t.TempDir(), serve.NewMemoryTenants()
			_, err := serve.New(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want an error with %q", err, c.want)
			}
		})
	}
	if got, want := serve.TenantWritableSources([]settings.SettingSource{settings.User, settings.Local, settings.Project}),
		[]settings.SettingSource{settings.Local, settings.Project}; !cmp.Equal(got, want) {
		t.Errorf("TenantWritableSources = %v, want %v", got, want)
	}
}

// A deep, long or otherwise unusable cwd is refused with 400 naming what
// is wrong, before anything is created: the server's root stays empty.
// The limits themselves are accepted.
func TestCwdLimits(t *testing.T) {
	deep := strings.TrimSuffix(strings.Repeat("a/", 3000), "/")
	atDepth := strings.TrimSuffix(strings.Repeat("d/", serve.MaxCwdDepth), "/")
	name := func(n int) string { return strings.Repeat("n", n) }
	// 5 components of 250 bytes: shallow, short names, too long in all.
	long := strings.Join([]string{name(250), name(250), name(250), name(250), name(250)}, "/")
	for _, c := range []struct {
		name string
		cwd  string
		code int
		want string // in the error message
	}{
		{"3000 levels", deep, 400, "cwd is 5999 bytes long; at most 1024"},
		{"one level too deep", atDepth + "/d", 400, fmt.Sprintf("cwd has %d path components; at most %d", serve.MaxCwdDepth+1, serve.MaxCwdDepth)},
		{"too long", long, 400, fmt.Sprintf("cwd is %d bytes long; at most %d", len(long), serve.MaxCwdBytes)},
		{"long name", name(serve.MaxCwdNameBytes + 1), 400, fmt.Sprintf("path component of %d bytes", serve.MaxCwdNameBytes+1)},
		{"NUL", "a\x00b", 400, "NUL"},
		{"at the depth limit", atDepth, 201, ""},
		{"at the name limit", name(serve.MaxCwdNameBytes), 201, ""},
		{"at the length limit", strings.Join([]string{name(255), name(255), name(255), name(252)}, "/") + "/abc", 201, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			code, out := e.do("POST", "/v1/sessions", tokenA, map[string]any{"cwd": c.cwd})
			var body struct {
				Error struct{ Type, Message string }
			}
			json.Unmarshal(out, &body)
			if code != c.code || !strings.Contains(body.Error.Message, c.want) {
				t.Errorf("%d %.300s, want %d with %q", code, out, c.code, c.want)
			}
			entries, err := os.ReadDir(e.srvRoot())
			if err != nil {
				t.Fatal(err)
			}
			if created := len(entries) > 0; created != (c.code == 201) {
				t.Errorf("root has %d entries after %d, want them only after 201", len(entries), code)
			}
			if c.code != 201 {
				if body.Error.Type != "invalid_request" {
					t.Errorf("error type %q, want invalid_request", body.Error.Type)
				}
				if l := e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil); len(l["sessions"].([]any)) != 0 {
					t.Errorf("sessions stored: %v", l)
				}
			}
		})
	}
}
