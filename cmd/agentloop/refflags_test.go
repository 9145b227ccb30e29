package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestEmptyArguments: an empty argument that is no flag's value is no
// prompt (the reference skips an empty prompt); an empty flag value stays
// the flag's value.
func TestEmptyArguments(t *testing.T) {
	type view struct {
		Prompt     string
		HasPrompt  bool
		Replay     bool
		EmptySys   bool
		ToolsEmpty bool
	}
	cases := []struct {
		name string
		args []string
		want view
	}{
		{"-p with an empty prompt", []string{"-p", ""}, view{}},
		{"a trailing empty argument", []string{"-p", "hi", ""}, view{Prompt: "hi", HasPrompt: true}},
		{"an empty argument before the prompt", []string{"-p", "", "hi"}, view{Prompt: "hi", HasPrompt: true}},
		{"after --", []string{"-p", "--", ""}, view{}},
		{"after a boolean flag (the ACP adapter)", []string{"--replay-user-messages", "", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, view{Replay: true}},
		{"an empty --system-prompt stays its value", []string{"-p", "--system-prompt", "", "hi"}, view{Prompt: "hi", HasPrompt: true, EmptySys: true}},
		{"an empty --tools stays its value", []string{"-p", "--tools", "", "hi"}, view{Prompt: "hi", HasPrompt: true, ToolsEmpty: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseArgs(tc.args)
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			got := view{c.prompt, c.hasPrompt, c.sdk.replayUser, c.sdk.emptySystemPrompt, c.toolsSet && len(c.tools) == 0}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestEmptyArgumentRuns: with `-p ""` the prompt comes from stdin, and
// the ACP adapter's `--replay-user-messages ""` gets its initialize
// answered and its message replayed.
func TestEmptyArgumentRuns(t *testing.T) {
	t.Run("print", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		code, out, errOut := runCLI(t, srv, "from stdin\n", "-p", "")
		if code != 0 || out != "ok\n" {
			t.Fatalf("code %d stdout %q stderr %q", code, out, errOut)
		}
		if got := strings.TrimSpace(srv.Requests()[0].LastUserText()); got != "from stdin" {
			t.Errorf("prompt sent %q, want the one on stdin", got)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		s := startSJ(t, srv, "--replay-user-messages", "")
		s.send(initLine("init1", ""))
		s.until(`"control_response"`, `"success"`)
		s.send(userLine("hello"))
		s.until(`"type":"user"`, `"isReplay":true`, "hello")
		if code := s.finish(); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
		}
	})
}

// TestNameFlag: --name (the TypeScript SDK passes it through extraArgs)
// names the session: Options.Title, which the stream reports.
func TestNameFlag(t *testing.T) {
	for _, args := range [][]string{{"--name", "nightly"}, {"-n", "nightly"}, {"--name=nightly"}} {
		c, err := parseArgs(append([]string{"-p", "hi"}, args...))
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		o, err := c.options()
		if err != nil || o.Title != "nightly" {
			t.Errorf("%q: Title %q, %v", args, o.Title, err)
		}
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--name", "nightly", "--output-format", "stream-json", "--verbose")
	if code != 0 || !strings.Contains(out, `"subtype":"session_title_changed"`) || !strings.Contains(out, `"title":"nightly"`) {
		t.Errorf("code %d stderr %q, no session_title_changed with the name in:\n%s", code, errOut, out)
	}
	// An empty name is no name, as in the reference, with a warning.
	c, err := parseArgs([]string{"-p", "hi", "--name", "first", "--name", ""})
	if err != nil || c.name != "" || len(c.warnings) != 1 || !strings.Contains(c.warnings[0], `--name "" is ignored`) {
		t.Errorf(`--name "": %+v, %v; want no name and one warning`, c, err)
	}
}

// TestWarningsInStream: a flag accepted with a warning is reported on
// stderr and, in stream-json output, as an informational line right after
// system/init, in print mode and under the SDK driver.
func TestWarningsInStream(t *testing.T) {
	const warning = "--ide is ignored"
	t.Run("print", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--ide", "--output-format", "stream-json", "--verbose")
		if code != 0 || !strings.Contains(errOut, warning) {
			t.Fatalf("code %d stderr %q, want the warning", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		i := indexOfLine(lines, `"subtype":"init"`)
		if i < 0 || i+1 >= len(lines) || !strings.Contains(lines[i+1], `"subtype":"informational"`) || !strings.Contains(lines[i+1], `"tag":"option_ignored"`) || !strings.Contains(lines[i+1], warning) {
			t.Errorf("no informational line with %q right after init:\n%s", warning, out)
		}
		if n := strings.Count(out, warning); n != 1 {
			t.Errorf("the warning is in the stream %d times, want once", n)
		}
	})
	t.Run("stream-json input", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		s := startSJ(t, srv, "--ide")
		s.send(initLine("init1", ""))
		s.send(userLine("hi"))
		s.until(`"subtype":"init"`)
		l := s.until(`"subtype":"informational"`)
		var m struct {
			Content string `json:"content"`
			Level   string `json:"level"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || !strings.Contains(l, warning) {
			t.Errorf("informational line %q (%v), want the warning", l, err)
		}
		if code := s.finish(); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
		}
	})
}

func indexOfLine(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// TestPromptSuggestionsValue: --prompt-suggestions takes the reference's
// optional choice value; a true one (or none) is warned about, a false one
// asks for nothing, and a word that is no choice is the prompt.
func TestPromptSuggestionsValue(t *testing.T) {
	cases := []struct {
		args   []string
		warned bool
		prompt string
		err    string
	}{
		{[]string{"-p", "hi", "--prompt-suggestions"}, true, "hi", ""},
		{[]string{"-p", "--prompt-suggestions", "on", "hi"}, true, "hi", ""},
		{[]string{"-p", "--prompt-suggestions", "false", "hi"}, false, "hi", ""},
		{[]string{"-p", "--prompt-suggestions=0", "hi"}, false, "hi", ""},
		{[]string{"-p", "--prompt-suggestions", "hi"}, true, "hi", ""},
		{[]string{"-p", "--prompt-suggestions=maybe", "hi"}, false, "", `--prompt-suggestions "maybe": want one of true, false`},
	}
	for _, tc := range cases {
		c, err := parseArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		warned := len(c.warnings) == 1 && strings.Contains(c.warnings[0], "--prompt-suggestions is ignored")
		if warned != tc.warned || c.prompt != tc.prompt || len(c.warnings) > 1 {
			t.Errorf("%q: warnings %q prompt %q; want warned %v, prompt %q", tc.args, c.warnings, c.prompt, tc.warned, tc.prompt)
		}
	}
}

// TestReferenceSubcommand: a command of the reference CLI as the first
// argument, without -p, is refused with a message naming it; with -p it
// is the prompt, as in the reference.
func TestReferenceSubcommand(t *testing.T) {
	if _, err := parseArgs([]string{"mcp", "list"}); err == nil || !strings.Contains(err.Error(), `"mcp" is a command of the reference CLI`) {
		t.Errorf("mcp list: %v, want the command refused by name", err)
	}
	c, err := parseArgs([]string{"-p", "doctor"})
	if err != nil || c.prompt != "doctor" {
		t.Errorf("-p doctor: %+v, %v; want the prompt doctor", c, err)
	}
}
