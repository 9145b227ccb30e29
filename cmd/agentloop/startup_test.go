package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestStartupFailureOutput: every failure after the command line was read
// and before the run began exits 1 with a line on stderr; json prints one
// error result object, json --verbose an array holding it, stream-json one
// result line and nothing else (no system/init: the session never
// started); text prints nothing on stdout.
func TestStartupFailureOutput(t *testing.T) {
	const unknownID = "00000000-0000-4000-8000-000000000001"
	missing := filepath.Join(os.TempDir(), "agentloop-no-such-file.json")
	cases := []struct {
		name    string
		args    []string
		stdin   string
		noCreds bool
		want    string // in stderr and in the result's errors
		session string // the result's session id, when it is known
	}{
		{"inline settings not JSON", []string{"-p", "hi", "--settings", "{bad"},
			"", false, "--settings: invalid JSON at line 1, column 2", ""},
		{"settings file missing", []string{"-p", "hi", "--settings", missing},
			"", false, "--settings " + missing + ": no such file or directory", ""},
		{"unknown resume id", []string{"-p", "hi", "--resume", unknownID},
			"", false, "No conversation found with session ID: " + unknownID, unknownID},
		{"no credentials", []string{"-p", "hi"},
			"", true, "ANTHROPIC_API_KEY", ""},
		{"unknown resume id without credentials", []string{"-p", "hi", "--resume", unknownID},
			"", true, "No conversation found with session ID: " + unknownID, unknownID},
		{"session id not a UUID", []string{"-p", "hi", "--session-id", "abc"},
			"", false, `session id "abc" is not a UUID`, ""},
		{"schema not for an object", []string{"-p", "hi", "--json-schema", `{"type":"array"}`},
			"", false, "output schema", ""},
		{"prompt file missing", []string{"-p", "--prompt-file", missing},
			"", false, "reading the prompt file", ""},
		{"no prompt at all", []string{"-p"},
			"", false, "no prompt", ""},
		{"system prompt file missing", []string{"-p", "hi", "--system-prompt-file", missing},
			"", false, "reading the system prompt file", ""},
	}
	formats := []struct {
		name string
		args []string
	}{
		{"text", nil},
		{"json", []string{"--output-format", "json"}},
		{"json verbose", []string{"--output-format", "json", "--verbose"}},
		{"stream-json", []string{"--output-format", "stream-json", "--verbose"}},
	}
	for _, tc := range cases {
		for _, f := range formats {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				var srv *agentlooptest.Server
				if tc.noCreds {
					t.Setenv("ANTHROPIC_API_KEY", "")
					t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
				} else {
					srv = agentlooptest.NewTB(t)
				}
				code, out, errOut := runCLI(t, srv, tc.stdin, append(append([]string{}, tc.args...), f.args...)...)
				if code != 1 {
					t.Errorf("exit %d, want 1", code)
				}
				if !strings.HasPrefix(errOut, "agentloop: ") || !strings.Contains(errOut, tc.want) {
					t.Errorf("stderr %q, want a message containing %q", errOut, tc.want)
				}
				if srv != nil && srv.Len() != 0 {
					t.Errorf("%d requests sent", srv.Len())
				}
				if f.name == "text" {
					if out != "" {
						t.Errorf("stdout %q, want nothing", out)
					}
					return
				}
				res := decodeStartupResult(t, f.name, out)
				if res == nil {
					return
				}
				got := []any{res.Subtype, res.IsError, res.NumTurns, res.TotalCostUSD, len(res.Errors), res.StopReason == nil}
				want := []any{"error_during_execution", true, 0, 0.0, 1, true}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if len(res.Errors) == 1 && !strings.Contains(res.Errors[0], tc.want) {
					t.Errorf("errors %q, want one containing %q", res.Errors, tc.want)
				}
				if res.SessionID == "" || tc.session != "" && res.SessionID != tc.session {
					t.Errorf("session_id %q, want %q", res.SessionID, tc.session)
				}
			})
		}
	}
}

// decodeStartupResult checks that out is exactly the result of format
// and returns it.
func decodeStartupResult(t *testing.T, format, out string) *agentloop.ResultMessage {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 {
		t.Errorf("stdout has %d lines, want 1: %q", len(lines), out)
		return nil
	}
	line := []byte(lines[0])
	if format == "json verbose" {
		var arr []json.RawMessage
		if err := json.Unmarshal(line, &arr); err != nil || len(arr) != 1 {
			t.Errorf("stdout %q is not an array of one message (%v)", out, err)
			return nil
		}
		line = arr[0]
	}
	m, err := agentloop.DecodeMessage(line)
	if err != nil {
		t.Errorf("stdout %q: %v", out, err)
		return nil
	}
	res, ok := m.(*agentloop.ResultMessage)
	if !ok {
		t.Errorf("stdout holds a %s, want a result", m.Kind())
		return nil
	}
	var fields map[string]any
	_ = json.Unmarshal(line, &fields)
	for _, k := range []string{"type", "subtype", "is_error", "num_turns", "session_id", "total_cost_usd", "usage", "modelUsage", "permission_denials", "errors", "uuid"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("result lacks %q: %s", k, line)
		}
	}
	return res
}

// TestErrorMessagesDoNotStutter: a settings error reads as one message
// about --settings, not as the layers it passed through.
func TestErrorMessagesDoNotStutter(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	_, _, errOut := runCLI(t, srv, "", "-p", "hi", "--settings", "{bad")
	want := "agentloop: --settings: invalid JSON at line 1, column 2: invalid character 'b' looking for beginning of object key string\n"
	if errOut != want {
		t.Errorf("stderr\n got %q\nwant %q", errOut, want)
	}
}

// TestReadOnlyConfigDir: when the transcript cannot be written under the
// config directory, the message suggests --no-session-persistence, and
// that flag does run.
func TestReadOnlyConfigDir(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) string // returns CLAUDE_CONFIG_DIR
	}{
		{"under a regular file", func(t *testing.T) string {
			// mkdir fails here even for root, whom permissions do not stop.
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(file, "claude")
		}},
		{"read-only directory", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes into read-only directories")
			}
			dir := filepath.Join(t.TempDir(), "claude")
			if err := os.Mkdir(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			return dir
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CLAUDE_CONFIG_DIR", tc.setup(t))
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--output-format", "json")
			if code != 1 || !strings.Contains(errOut, "--no-session-persistence") || !strings.Contains(out, "--no-session-persistence") {
				t.Errorf("exit %d, stderr %q, stdout %q: want a hint about --no-session-persistence", code, errOut, out)
			}
			code, out, errOut = runCLI(t, srv, "", "-p", "hi", "--no-session-persistence")
			if code != 0 || out != "ok\n" {
				t.Errorf("with --no-session-persistence: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}
