package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// runCLI runs the command against srv with args and stdin.
func runCLI(t *testing.T, srv *agentlooptest.Server, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if srv != nil {
		t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	}
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPrintFormats(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello there."))
		code, out, errOut := runCLI(t, srv, "", "-p", "Say hello")
		if code != 0 || out != "Hello there.\n" || errOut != "" {
			t.Errorf("code %d stdout %q stderr %q", code, out, errOut)
		}
		if got := srv.Requests()[0].LastUserText(); got != "Say hello" {
			t.Errorf("prompt sent = %q", got)
		}
	})
	t.Run("stdin prompt and json", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("From stdin."))
		code, out, _ := runCLI(t, srv, "question on stdin\n", "--print", "--output-format=json")
		var res agentloop.ResultMessage
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
			t.Fatalf("code %d, output %q: %v", code, out, err)
		}
		if res.Text() != "From stdin." || res.Subtype != "success" {
			t.Errorf("result = %+v", res)
		}
		if got := srv.Requests()[0].LastUserText(); got != "question on stdin\n" {
			t.Errorf("prompt sent = %q", got)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("Streamed."))
		code, out, _ := runCLI(t, srv, "", "-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		var kinds []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			m, err := agentloop.DecodeMessage([]byte(line))
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			k := m.Kind()
			if s, ok := m.(*agentloop.SystemMessage); ok {
				k += "/" + s.Subtype
			}
			if e, ok := m.(*agentloop.StreamEventMessage); ok {
				k += "/" + e.EventType()
			}
			kinds = append(kinds, k)
		}
		want := []string{"system/init", "system/status", "stream_event/message_start", "stream_event/content_block_start",
			"stream_event/content_block_delta", "assistant", "stream_event/content_block_stop", "stream_event/message_delta",
			"stream_event/message_stop", "result"}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
	})
	t.Run("error result exits 1", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Error(400, "invalid_request_error", "prompt is too long"))
		code, out, _ := runCLI(t, srv, "", "-p", "hi")
		if code != 1 || !strings.Contains(out, "prompt is too long") {
			t.Errorf("code %d out %q", code, out)
		}
	})
	t.Run("max turns exits 1", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hi"}))
		code, out, _ := runCLI(t, srv, "", "-p", "hi", "--max-turns=1", "--output-format", "json")
		if code != 1 || !strings.Contains(out, `"error_max_turns"`) {
			t.Errorf("code %d out %q", code, out)
		}
	})
}

func TestBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.txt")
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"-p", "hi", "--frobnicate"}, "unknown option --frobnicate"},
		{"missing value", []string{"-p", "hi", "--model"}, "--model needs a value"},
		{"bad format", []string{"-p", "hi", "--output-format", "xml"}, `--output-format "xml"`},
		{"stream-json without verbose", []string{"-p", "hi", "--output-format", "stream-json"}, "needs --verbose"},
		{"bad max turns", []string{"-p", "hi", "--max-turns", "zero"}, `--max-turns "zero"`},
		{"negative budget", []string{"-p", "hi", "--max-budget-usd=-1"}, `--max-budget-usd "-1"`},
		{"bad mode", []string{"-p", "hi", "--permission-mode", "yolo"}, `--permission-mode: unknown permission mode "yolo" (want default, acceptEdits, bypassPermissions, plan, dontAsk or auto)`},
		{"bad effort", []string{"-p", "hi", "--effort", "extreme"}, `--effort: unknown effort "extreme" (want low, medium, high, xhigh or max)`},
		{"bool with value", []string{"-p", "hi", "--verbose=yes"}, "--verbose takes no value"},
		{"two prompts", []string{"-p", "one", "two"}, "more than one prompt"},
		{"unreadable prompt file", []string{"-p", "--prompt-file", missing}, "reading the prompt file"},
		{"empty prompt", []string{"-p", "  "}, "the prompt is empty"},
		{"bad session id", []string{"-p", "hi", "--session-id", "abc"}, `session id "abc" is not a UUID`},
		{"json schema not JSON", []string{"-p", "hi", "--json-schema", "{nope"}, "--json-schema: invalid JSON at line 1, column 2: invalid character 'n'"},
		{"json schema error on line 3", []string{"-p", "hi", "--json-schema", "{\n  \"type\": \"object\",\n}"}, "--json-schema: invalid JSON at line 3, column 1: invalid character '}'"},
		{"json schema cut short", []string{"-p", "hi", "--json-schema", `{"type":`}, "--json-schema: invalid JSON at line 1, column 8: unexpected end of input"},
		{"json schema not an object schema", []string{"-p", "hi", "--json-schema", `{"type":"array"}`}, "output schema"},
		{"thinking budget too small", []string{"-p", "hi", "--max-thinking-tokens", "10"}, `--max-thinking-tokens "10"`},
		{"bad thinking", []string{"-p", "hi", "--thinking", "on"}, `--thinking: unknown thinking type "on" (want adaptive, enabled or disabled)`},
		{"empty model", []string{"-p", "hi", "--model", ""}, "--model: want a model id or alias, not an empty string"},
		{"blank model", []string{"-p", "hi", "--model=  "}, "--model: want a model id or alias"},
		{"enabled thinking without budget", []string{"-p", "hi", "--thinking", "enabled"}, "needs --max-thinking-tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t)
			code, out, errOut := runCLI(t, srv, "", tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.wantErr) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("code %d stderr %q, want one line containing %q", code, errOut, tc.wantErr)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if srv.Len() != 0 {
				t.Errorf("%d requests sent for a bad command line", srv.Len())
			}
		})
	}
}

func TestNoCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	code, _, errOut := runCLI(t, nil, "", "-p", "hi")
	if code != 1 || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Errorf("code %d stderr %q", code, errOut)
	}
}

func TestFlagForms(t *testing.T) {
	c, err := parseArgs([]string{"--allowedTools", "Bash(npm test:*),Read", "--disallowed-tools=Write", "-p", "the prompt",
		"--tools", "Bash Read", "--add-dir", "/x", "--max-budget-usd", "0.5", "--fallback-model=sonnet,haiku"})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.allowed, c.disallowed, c.prompt, c.tools, c.addDirs, c.maxBudget, c.fallback}
	want := []any{[]string{"Bash(npm test:*)", "Read"}, []string{"Write"}, "the prompt", []string{"Bash", "Read"},
		[]string{"/x"}, 0.5, []string{"sonnet", "haiku"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c, err = parseArgs([]string{"-p", "x", "--tools", ""})
	if err != nil || !c.toolsSet || len(c.tools) != 0 {
		t.Errorf("--tools \"\" = %+v, %v", c, err)
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("-p\x00hi\x00--max-turns\x003")
	f.Add("--allowedTools=Bash(a b)\x00--tools")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseArgs(strings.Split(s, "\x00"))
	})
}

var _ = os.Getenv
