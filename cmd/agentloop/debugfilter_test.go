package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func TestParseDebugFilter(t *testing.T) {
	for _, tc := range []struct {
		in      string
		include []string
		exclude []string
		err     bool
	}{
		{in: ""},
		{in: " , ,"},
		{in: "api,hooks", include: []string{"api", "hooks"}},
		{in: " Hooks , API ,hooks", include: []string{"api", "hooks"}},
		{in: "!mcp", exclude: []string{"mcp"}},
		{in: "api,!mcp,! sandbox", include: []string{"api"}, exclude: []string{"mcp", "sandbox"}},
		{in: "hook_failed,session-store", include: []string{"hook_failed", "session-store"}},
		{in: "!", err: true},
		{in: "!!mcp", err: true},
		{in: "api hooks", err: true},
		{in: "a=b", err: true},
		{in: "mcp,Ünïcode", err: true},
	} {
		f, err := parseDebugFilter(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("parseDebugFilter(%q) err = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(debugFilter{tc.include, tc.exclude}, f, cmp.AllowUnexported(debugFilter{})); diff != "" {
			t.Errorf("parseDebugFilter(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestDebugFilterKeeps(t *testing.T) {
	for _, tc := range []struct {
		filter, tag string
		want        bool
	}{
		{"", agentloop.DiagMCP, true},
		{"", "", true},
		{"api,hooks", tagModelCall, true},
		{"api,hooks", agentloop.DiagHookFailed, true},
		{"api,hooks", agentloop.DiagHookCallbackFailed, true},
		{"api,hooks", agentloop.DiagMCP, false},
		{"api,hooks", "", false},
		{"hook_failed", agentloop.DiagHookFailed, true},
		{"hook_failed", agentloop.DiagHook, false},
		{"!mcp", agentloop.DiagMCP, false},
		{"!mcp", agentloop.DiagSettings, true},
		{"!mcp", "", true},
		{"!mcp", "some_new_tag", true},
		{"some_new_tag", "some_new_tag", true},
		{"settings", agentloop.DiagOption, true},
		{"session", "mirror_error", true},
		{"session", agentloop.DiagWritesLost, true},
		{"tools", tagToolCall, true},
		{"tools,!tool_call", tagToolCall, false},
		{"tools,!tool_call", agentloop.DiagTool, true},
		{"hooks,!hooks", agentloop.DiagHook, false},
	} {
		f, err := parseDebugFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.keeps(tc.tag); got != tc.want {
			t.Errorf("filter %q keeps(%q) = %v, want %v", tc.filter, tc.tag, got, tc.want)
		}
	}
}

// Every Diag* tag has a category, so "--debug=<category>" reaches it.
func TestDebugCategoriesCoverTags(t *testing.T) {
	for _, tag := range []string{agentloop.DiagSettings, agentloop.DiagHook, agentloop.DiagHookFailed, agentloop.DiagHookMessage,
		agentloop.DiagRule, agentloop.DiagTool, agentloop.DiagOption, agentloop.DiagTranscript, agentloop.DiagSandbox,
		agentloop.DiagSessionStore, agentloop.DiagMemory, agentloop.DiagProjectFile, agentloop.DiagAgent, agentloop.DiagMCP,
		agentloop.DiagPlugin, agentloop.DiagHookCallbackFailed, agentloop.DiagWritesLost, agentloop.DiagPricing} {
		if debugCategory(tag) == "" {
			t.Errorf("tag %q has no --debug category", tag)
		}
	}
}

func FuzzParseDebugFilter(f *testing.F) {
	for _, s := range []string{"", "api,hooks", "!mcp", " API ,!x_y-z,", "!", "a b", "!!a", "hooks,!hooks"} {
		f.Add(s, "hooks")
	}
	f.Fuzz(func(t *testing.T, s, tag string) {
		flt, err := parseDebugFilter(s)
		if err != nil {
			return
		}
		again, err := parseDebugFilter(flt.String())
		if err != nil {
			t.Fatalf("String() %q of the filter of %q does not parse: %v", flt.String(), s, err)
		}
		if diff := cmp.Diff(flt, again, cmp.AllowUnexported(debugFilter{})); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", s, diff)
		}
		keeps := flt.keeps(tag)
		for _, x := range flt.exclude {
			if keeps && (strings.ToLower(tag) == x || debugCategory(tag) == x) {
				t.Fatalf("filter %q keeps %q, which it excludes", s, tag)
			}
		}
		if flt.all() && !keeps {
			t.Fatalf("the empty filter %q drops %q", s, tag)
		}
	})
}

// --debug takes its filter only as --debug=<filter>: the next argument
// stays the prompt.
func TestDebugFlagForms(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		prompt string
		filter string
	}{
		{[]string{"-p", "--debug", "hello"}, "hello", ""},
		{[]string{"-p", "--debug", "api,hooks"}, "api,hooks", ""},
		{[]string{"-p", "--debug=api,hooks", "hello"}, "hello", "api,hooks"},
		{[]string{"-p", "-d=!mcp", "hello"}, "hello", "!mcp"},
		{[]string{"-p", "--debug=", "hello"}, "hello", ""},
		{[]string{"--debug=API", "-p", "hello", "--debug-file", "/dev/null"}, "hello", "api"},
	} {
		c, err := parseArgs(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !c.debug || c.prompt != tc.prompt || c.debugFilter.String() != tc.filter {
			t.Errorf("%q: debug %v, prompt %q, filter %q; want the prompt %q and the filter %q",
				tc.args, c.debug, c.prompt, c.debugFilter.String(), tc.prompt, tc.filter)
		}
	}
	if _, err := parseArgs([]string{"-p", "--debug=api hooks", "hello"}); err == nil || !strings.Contains(err.Error(), "not a category name") {
		t.Errorf("a malformed filter: err = %v", err)
	}
	if !strings.Contains(usageText(), "--debug, -d[=value]") {
		t.Errorf("--help does not show --debug's optional value:\n%s", usageText())
	}
}

// The filter handler drops what the filter leaves out, whether the tag is
// on the record or given to With.
func TestFilterHandler(t *testing.T) {
	f, err := parseDebugFilter("hooks,model_call")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(newFilterHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}), f))
	log.Warn("kept: a hook failed", "tag", agentloop.DiagHookFailed)
	log.Warn("dropped: an MCP server", "tag", agentloop.DiagMCP)
	log.Warn("dropped: no tag")
	log.With("tag", tagModelCall).Debug("dropped: below the text handler's level")
	log.With("tag", tagModelCall).Info("kept: a model call")
	log.With("tag", agentloop.DiagMCP).WithGroup("g").Info("dropped: tag given before the group", "tag", agentloop.DiagHook)
	want := "level=WARN msg=\"kept: a hook failed\" tag=hook_failed\nlevel=INFO msg=\"kept: a model call\" tag=model_call\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if h := newFilterHandler(slog.DiscardHandler, debugFilter{}); h != slog.DiscardHandler {
		t.Errorf("the empty filter wraps the handler: %T", h)
	}
}

// The trace writes one line per model call and per tool call, with the
// times between the messages that bound them.
func TestDebugTrace(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	tr := newDebugTrace(log)
	clock := time.Unix(0, 0)
	tr.now = func() time.Time { return clock }
	at := func(ms int, m agentloop.Message) {
		clock = time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond)
		tr.see(m)
	}
	stop := func(s string) *string { return &s }
	yes := true
	reply := func(id string, usage model.Usage, reason *string, blocks ...model.Content) *message.Assistant {
		return &message.Assistant{Message: message.APIMessage{ID: id, Model: "claude-test", Content: blocks, Usage: usage, StopReason: reason}}
	}
	at(0, &message.System{Subtype: "init"})
	at(120, reply("msg_1", model.Usage{InputTokens: 10, OutputTokens: 1}, nil, model.TextBlock("Reading.")))
	at(150, reply("msg_1", model.Usage{InputTokens: 10, OutputTokens: 7, CacheReadInputTokens: 4}, stop("tool_use"),
		model.Content{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read"}))
	at(175, &message.User{Message: message.UserContent{Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "toolu_1", IsError: &yes}}}})
	at(400, reply("msg_2", model.Usage{InputTokens: 30, OutputTokens: 2}, stop("end_turn"), model.TextBlock("No such file.")))
	at(401, &message.Result{})
	want := `level=DEBUG msg="model call" tag=model_call model=claude-test input_tokens=10 output_tokens=7 cache_read_tokens=4 cache_creation_tokens=0 stop_reason=tool_use ms=150
level=DEBUG msg="tool call" tag=tool_call tool=Read tool_use_id=toolu_1 ms=25 is_error=true
level=DEBUG msg="model call" tag=model_call model=claude-test input_tokens=30 output_tokens=2 cache_read_tokens=0 cache_creation_tokens=0 stop_reason=end_turn ms=225
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	var nilTrace *debugTrace
	nilTrace.see(&message.Result{}) // does nothing
}

// End to end: --debug=<filter> narrows what the CLI logs on stderr, and a
// bare --debug before the prompt leaves the prompt alone.
func TestDebugFilterCLI(t *testing.T) {
	run := func(t *testing.T, debug string) string {
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": "/nonexistent/agentloop-debug-test"}),
			agentlooptest.Text("No such file."))
		code, out, stderr := runCLI(t, srv, "", "-p", debug, "Read it", "--settings", `{"statusLine": {"type": "command", "command": "true"}}`,
			"--allowedTools", "Read")
		if code != 0 || out != "No such file.\n" {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
		}
		if got := srv.Requests()[0].LastUserText(); got != "Read it" {
			t.Errorf("prompt sent = %q", got)
		}
		return stderr
	}
	const settingsLine = `msg="settings key \"statusLine\" is not honoured by agentloop; ignored" tag=settings_ignored`
	has := func(t *testing.T, log, what string, want bool) {
		t.Helper()
		if strings.Contains(log, what) != want {
			t.Errorf("log contains %q: %v, want %v:\n%s", what, !want, want, log)
		}
	}
	t.Run("bare", func(t *testing.T) {
		log := run(t, "--debug")
		has(t, log, settingsLine, true)
		has(t, log, `msg="model call" tag=model_call model=`, true)
		has(t, log, `msg="tool call" tag=tool_call tool=Read tool_use_id=toolu_1 ms=`, true)
		has(t, log, "is_error=true", true)
	})
	t.Run("api only", func(t *testing.T) {
		log := run(t, "--debug=api")
		has(t, log, settingsLine, false)
		has(t, log, `msg="model call"`, true)
		has(t, log, `msg="tool call"`, false)
	})
	t.Run("all but api", func(t *testing.T) {
		log := run(t, "--debug=!api")
		has(t, log, settingsLine, true)
		has(t, log, `msg="model call"`, false)
		has(t, log, `msg="tool call"`, true)
	})
}
