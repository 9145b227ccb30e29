package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// cliPlugin writes a plugin named kit, with the command /kit:hello, into
// a new directory and returns the directory.
func cliPlugin(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "kit")
	for rel, body := range map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "0.3.0"}`,
		"commands/hello.md":          "Say hello to $ARGUMENTS.\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestPluginDirFlag: --plugin-dir loads the plugin: init lists it and its
// namespaced command, and "/kit:hello world" runs the command.
func TestPluginDirFlag(t *testing.T) {
	for _, flag := range []string{"--plugin-dir", "--plugin-dir-no-mcp"} {
		t.Run(flag, func(t *testing.T) {
			root := cliPlugin(t)
			srv := agentlooptest.NewTB(t, agentlooptest.Text("hello"))
			code, out, errOut := runCLI(t, srv, "", "-p", "/kit:hello world", "--output-format", "stream-json", "--verbose",
				"--setting-sources=", flag, root)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			init, _, _ := strings.Cut(out, "\n")
			for _, want := range []string{`"plugins":[{"name":"kit","path":` + quoteJSON(root) + `,"version":"0.3.0"}]`, `"kit:hello"`} {
				if !strings.Contains(init, want) {
					t.Errorf("init line %s lacks %s", init, want)
				}
			}
			if got := srv.Requests()[0].LastUserText(); !strings.Contains(got, "Say hello to world.") {
				t.Errorf("prompt sent %q, want the plugin command's text", got)
			}
		})
	}
}

// TestPluginDirInvalid: a --plugin-dir that is not a plugin stops the
// command with exit 1 and a message naming it, before any request; an
// empty one is a usage error.
func TestPluginDirInvalid(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	srv := agentlooptest.NewTB(t)
	code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--plugin-dir", missing)
	if code != 1 || !strings.Contains(errOut, "plugin "+missing) || out != "" || srv.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q, %d requests; want 1 and a message naming %s", code, out, errOut, srv.Len(), missing)
	}
	if _, err := parseArgs([]string{"-p", "hi", "--plugin-dir="}); err == nil || !strings.Contains(err.Error(), "--plugin-dir: want a plugin directory") {
		t.Errorf("--plugin-dir=: error %v", err)
	}
}

// TestStreamJSONInitializePlugins: plugins delivered in initialize load,
// and the answer says plugins_applied: true; a plugin type other than
// local is refused.
func TestStreamJSONInitializePlugins(t *testing.T) {
	root := cliPlugin(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	s := startSJ(t, srv, "--await-initialize", "--setting-sources=")
	s.send(initLine("init1", `"plugins":[{"type":"local","path":`+quoteJSON(root)+`}]`))
	if ans := s.until(`"request_id":"init1"`); !strings.Contains(ans, `"plugins_applied":true`) {
		t.Errorf("initialize answer %s, want plugins_applied true", ans)
	}
	s.send(userLine("/kit:hello there"))
	init := s.until(`"subtype":"init"`)
	if !strings.Contains(init, `"name":"kit"`) || !strings.Contains(init, `"kit:hello"`) {
		t.Errorf("init line %s lacks the plugin or its command", init)
	}
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if got := srv.Requests()[0].LastUserText(); !strings.Contains(got, "Say hello to there.") {
		t.Errorf("prompt sent %q, want the plugin command's text", got)
	}
	if _, err := initPlugins([]byte(`[{"type":"marketplace","path":"x"}]`)); err == nil || !strings.Contains(err.Error(), `type "marketplace" is not supported`) {
		t.Errorf("a marketplace plugin: error %v", err)
	}
}
