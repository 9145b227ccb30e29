package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestAgentsFlag: --agents takes inline JSON or a file of it; fields
// agentloop does not know are ignored with a warning on stderr (or in the
// --debug-file log); malformed definitions are errors that say where.
func TestAgentsFlag(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"reviewer":{"description":"Reviews code","prompt":"You review code.","tools":["Read"]}}`
	t.Run("ok", func(t *testing.T) {
		cases := []struct {
			name, value  string
			wantWarnings []string
		}{
			{"inline", good, nil},
			{"file", file("agents.json", good), nil},
			{"file with a byte order mark", file("bom.json", "\xef\xbb\xbf"+good), nil},
			{"unknown fields", `{"reviewer":{"description":"Reviews code","prompt":"You review code.","color":"red","observer":"x"}}`,
				[]string{`agentloop: warning: --agents: agent "reviewer": field "color" is not supported and is ignored`,
					`agentloop: warning: --agents: agent "reviewer": field "observer" is not supported and is ignored`}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
				code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--agents", tc.value, "--tools", "Agent,Read",
					"--output-format", "stream-json", "--verbose")
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				var gotWarnings []string
				for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
					if l != "" {
						gotWarnings = append(gotWarnings, l)
					}
				}
				if diff := cmp.Diff(tc.wantWarnings, gotWarnings); diff != "" {
					t.Errorf("stderr (-want +got):\n%s", diff)
				}
				if !strings.Contains(out, `"type":"result"`) {
					t.Errorf("stdout %q has no result", out)
				}
				if body := string(srv.Requests()[0].Body); !strings.Contains(body, "Reviews code") {
					t.Errorf("the request does not offer the reviewer agent: %s", body)
				}
			})
		}
	})
	t.Run("warning to the debug log", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		log := filepath.Join(t.TempDir(), "debug.log")
		code, _, errOut := runCLI(t, srv, "", "-p", "hi", "--debug-file", log,
			"--agents", `{"a":{"description":"d","prompt":"p","color":"red"}}`)
		b, _ := os.ReadFile(log)
		if code != 0 || strings.Contains(errOut, "color") || !strings.Contains(string(b), `field \"color\" is not supported`) {
			t.Errorf("exit %d, stderr %q, log %q", code, errOut, b)
		}
	})
	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			name, value, want string
		}{
			{"missing file", filepath.Join(dir, "nope.json"), "--agents: open " + filepath.Join(dir, "nope.json") + ": no such file or directory"},
			{"inline syntax", `{"a":{"description":"d",}}`, "--agents: invalid JSON at line 1, column 25: invalid character '}'"},
			{"file syntax", file("bad.json", "{\n  \"a\": {\n    \"description\": \"d\"\n  }\n"), "--agents: invalid JSON at line 4, column 4: unexpected end of input"},
			{"not an object", file("list.json", `["a"]`), "--agents: want a JSON object of agents by name"},
			{"agent not an object", `{"a":"helper"}`, `--agents: agent "a": want an object with a description and a prompt`},
			{"no prompt", `{"a":{"description":"d"}}`, `--agents: agent "a" needs a description and a prompt`},
			{"wrong type", `{"a":{"description":"d","prompt":"p","tools":"Read"}}`, `--agents: agent "a": tools: want an array of strings, got string`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				srv := agentlooptest.NewTB(t)
				code, _, errOut := runCLI(t, srv, "", "-p", "hi", "--agents", tc.value)
				if code != 1 || !strings.HasPrefix(errOut, "agentloop: "+tc.want) || strings.Count(errOut, "\n") != 1 {
					t.Errorf("exit %d, stderr %q, want one line starting %q", code, errOut, "agentloop: "+tc.want)
				}
			})
		}
	})
}
