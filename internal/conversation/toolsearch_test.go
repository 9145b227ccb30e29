package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

type genIn struct {
	Text string `json:"text" jsonschema:"what to work on"`
}

// genTools returns n deferrable read-only tools named like MCP tools,
// mcp__gen__tool<i>, each answering "tool<i> ran: <text>". Three stand
// out for keyword searches: tool42 is described as posting to Slack,
// tool100 is named mcp__gen__slack_post, and tool13 always fails.
func genTools(n int) []agentloop.Tool {
	out := make([]agentloop.Tool, n)
	for i := range n {
		name, desc := fmt.Sprintf("mcp__gen__tool%d", i), fmt.Sprintf("Generated tool %d for testing.", i)
		switch i {
		case 42:
			desc = "Posts a message to a Slack channel."
		case 100:
			name = "mcp__gen__slack_post"
		}
		out[i] = agentloop.NewTool(name, desc, func(ctx context.Context, in genIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			if i == 13 {
				return agentloop.ToolResult{}, errors.New("tool13 is broken")
			}
			return agentloop.TextResult(fmt.Sprintf("tool%d ran: %s", i, in.Text)), nil
		}, &agentloop.ToolOptions{ReadOnly: true, Defer: true})
	}
	return out
}

func genOptions(t *testing.T, srv *agentlooptest.Server) *agentloop.Options {
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Read"},
		CustomTools: genTools(200), AllowedTools: []string{"mcp__gen"}, SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
}

func genNames(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, "mcp__gen__") })
}

// definedNames are the names of the definitions a ToolSearch result shows,
// in order.
// loadedNames is the tools a ToolSearch result loaded: its tool_reference
// blocks (the form for the Messages API at a loopback address, as the
// test servers are), else the definition lines of its text.
func loadedNames(t *testing.T, res model.Content) []string {
	t.Helper()
	var out []string
	for _, b := range res.Blocks {
		if b.Type == model.TypeToolReference {
			out = append(out, b.ToolName)
		}
	}
	if out != nil {
		return out
	}
	return definedNames(t, res.Text)
}

func definedNames(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var d struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("definition line %q: %v", line, err)
		}
		if !strings.Contains(string(d.InputSchema), `"text"`) {
			t.Errorf("definition of %s has no input schema: %s", d.Name, line)
		}
		out = append(out, d.Name)
	}
	return out
}

// TestToolSearchLoadsDeferredTools: with 200 deferrable tools the first
// request declares none of them, only ToolSearch, and names them in the
// system text; ToolSearch with select: and with keywords returns the
// right definitions, and the next request declares them.
func TestToolSearchLoadsDeferredTools(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "ToolSearch", map[string]any{"query": "select:mcp__gen__tool7,mcp__gen__tool9"}),
		agentlooptest.ToolUse("toolu_2", "ToolSearch", map[string]any{"query": "slack post", "max_results": 3}),
		agentlooptest.Text("done"))
	var structured []any
	for m, err := range agentloop.Query(context.Background(), "use the generated tools", genOptions(t, srv)) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := m.(*agentloop.UserMessage); ok && u.ToolUseResult != nil {
			structured = append(structured, u.ToolUseResult)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	if diff := cmp.Diff([]string{"Read", "ToolSearch"}, first.ToolNames()); diff != "" {
		t.Errorf("first request's tools (-want +got):\n%s", diff)
	}
	if n := len(first.Body); n > 20_000 {
		t.Errorf("first request is %d bytes; deferred schemas should keep it under 20000", n)
	}
	sys := first.SystemText()
	for _, n := range []string{"mcp__gen__tool0", "mcp__gen__tool7", "mcp__gen__slack_post", "mcp__gen__tool199"} {
		if !strings.Contains(sys, n) {
			t.Errorf("system text does not name deferred tool %s", n)
		}
	}
	if !strings.Contains(sys, "select:") {
		t.Errorf("system text does not say how to load deferred tools")
	}

	res, _ := reqs[1].ToolResult("toolu_1")
	if diff := cmp.Diff([]string{"mcp__gen__tool7", "mcp__gen__tool9"}, loadedNames(t, res)); diff != "" {
		t.Errorf("select: result definitions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mcp__gen__tool7", "mcp__gen__tool9"}, genNames(reqs[1].ToolNames())); diff != "" {
		t.Errorf("second request's deferred tools (-want +got):\n%s", diff)
	}

	res, _ = reqs[2].ToolResult("toolu_2")
	if diff := cmp.Diff([]string{"mcp__gen__slack_post", "mcp__gen__tool42"}, loadedNames(t, res)); diff != "" {
		t.Errorf("keyword result definitions, best first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mcp__gen__tool7", "mcp__gen__tool9", "mcp__gen__tool42", "mcp__gen__slack_post"},
		genNames(reqs[2].ToolNames())); diff != "" {
		t.Errorf("third request's deferred tools (-want +got):\n%s", diff)
	}

	var got []map[string]any
	for _, s := range structured {
		b, _ := json.Marshal(s)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		got = append(got, m)
	}
	want := []map[string]any{
		{"matches": []any{"mcp__gen__tool7", "mcp__gen__tool9"}, "query": "select:mcp__gen__tool7,mcp__gen__tool9", "total_deferred_tools": 200.0},
		{"matches": []any{"mcp__gen__slack_post", "mcp__gen__tool42"}, "query": "slack post", "total_deferred_tools": 200.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool_use_result (-want +got):\n%s", diff)
	}
}

// TestToolSearchDirectCall: a deferred tool called without loading runs;
// when such a call fails, by invalid input or by the tool's own error, its
// error result carries the tool's input schema and how to load it.
func TestToolSearchDirectCall(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_1", "mcp__gen__tool3", map[string]any{"text": "hi"}),
			agentlooptest.ToolUseBlock("toolu_2", "mcp__gen__tool4", map[string]any{"txt": "typo"}),
			agentlooptest.ToolUseBlock("toolu_3", "mcp__gen__tool13", map[string]any{"text": "x"})),
		agentlooptest.Text("done"))
	if _, err := agentloop.Query(context.Background(), "go", genOptions(t, srv)).Result(); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[1]
	ran, _ := req.ToolResult("toolu_1")
	if ran.Text != "tool3 ran: hi" || (ran.IsError != nil && *ran.IsError) {
		t.Errorf("direct call result = %q (is_error %v), want it to run", ran.Text, ran.IsError)
	}
	for _, c := range []struct{ id, tool, cause string }{
		{"toolu_2", "mcp__gen__tool4", "txt"},
		{"toolu_3", "mcp__gen__tool13", "tool13 is broken"},
	} {
		res, _ := req.ToolResult(c.id)
		if res.IsError == nil || !*res.IsError {
			t.Errorf("%s: not an error: %q", c.tool, res.Text)
		}
		for _, want := range []string{c.cause, "deferred tool", `"properties":{"text"`, "ToolSearch", "select:" + c.tool} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("%s: error result lacks %q:\n%s", c.tool, want, res.Text)
			}
		}
	}
	if got := genNames(req.ToolNames()); len(got) > 0 {
		t.Errorf("direct calls loaded tools %q", got)
	}
}

// TestToolSearchSwitch: the option and ENABLE_TOOL_SEARCH (process
// environment, settings' env, Options.Env) turn tool search off or to
// auto; without deferrable tools nothing changes; a bad option is an error
// and a bad variable a diagnostic.
func TestToolSearchSwitch(t *testing.T) {
	plain := func() []agentloop.Tool {
		return []agentloop.Tool{agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in genIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{}, nil
		}, &agentloop.ToolOptions{ReadOnly: true})}
	}
	cases := []struct {
		name     string
		setenv   string // ENABLE_TOOL_SEARCH in the process environment
		settings string // settings.json of the project
		opts     func(*agentloop.Options)
		deferred bool
		diag     string
	}{
		{name: "default", deferred: true},
		{name: "option off", opts: func(o *agentloop.Options) { o.ToolSearch = agentloop.ToolSearchOff }},
		{name: "option on over env off", setenv: "false", opts: func(o *agentloop.Options) { o.ToolSearch = agentloop.ToolSearchOn }, deferred: true},
		{name: "process env off", setenv: "false"},
		{name: "Options.Env off", opts: func(o *agentloop.Options) { o.Env = map[string]string{"ENABLE_TOOL_SEARCH": "false"} }},
		{name: "settings env off", settings: `{"env":{"ENABLE_TOOL_SEARCH":"false"}}`},
		{name: "auto below threshold", opts: func(o *agentloop.Options) { o.ToolSearch = agentloop.ToolSearchAuto }},
		// 200 definitions of about 200 characters: 10k tokens, 5% of a
		// 200k context window.
		{name: "auto:4 above threshold", setenv: "auto:4", deferred: true,
			opts: func(o *agentloop.Options) { o.Model = "claude-sonnet-4-5" }},
		{name: "auto:6 below threshold", setenv: "auto:6",
			opts: func(o *agentloop.Options) { o.Model = "claude-sonnet-4-5" }},
		{name: "bad env value", setenv: "sometimes", deferred: true, diag: "ENABLE_TOOL_SEARCH"},
		{name: "nothing deferrable", opts: func(o *agentloop.Options) { o.CustomTools = plain() }},
		{name: "ToolSearch disallowed", opts: func(o *agentloop.Options) { o.DisallowedTools = []string{"ToolSearch"} }, diag: "disallowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setenv != "" {
				t.Setenv("ENABLE_TOOL_SEARCH", c.setenv)
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			o := genOptions(t, srv)
			if c.settings != "" {
				if err := os.MkdirAll(filepath.Join(o.Cwd, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(o.Cwd, ".claude", "settings.json"), []byte(c.settings), 0o644); err != nil {
					t.Fatal(err)
				}
				o.SettingSources = []settings.SettingSource{settings.Project}
			}
			if c.opts != nil {
				c.opts(o)
			}
			var diags []string
			for m, err := range agentloop.Query(context.Background(), "hi", o) {
				if err != nil {
					t.Fatal(err)
				}
				if d, ok := agentloop.DiagnosticOf(m); ok {
					diags = append(diags, d.Text)
				}
			}
			req := srv.Requests()[0]
			t.Logf("first request: %d bytes, %d tools", len(req.Body), len(req.Params.Tools))
			names := req.ToolNames()
			hasSearch := slices.Contains(names, "ToolSearch")
			wantGen := len(o.CustomTools)
			if c.deferred {
				wantGen = 0
			}
			if hasSearch != c.deferred || len(genNames(names))+countPlain(names) != wantGen {
				t.Errorf("deferred=%v: ToolSearch declared %v, %d custom tools declared of %d", c.deferred, hasSearch, len(genNames(names))+countPlain(names), len(o.CustomTools))
			}
			if got := strings.Contains(req.SystemText(), "<deferred-tools>"); got != c.deferred {
				t.Errorf("system text names deferred tools: %v, want %v", got, c.deferred)
			}
			if c.diag == "" && len(diags) > 0 {
				t.Errorf("unexpected diagnostics %q", diags)
			}
			if c.diag != "" && !slices.ContainsFunc(diags, func(d string) bool { return strings.Contains(d, c.diag) }) {
				t.Errorf("diagnostics %q, want one about %q", diags, c.diag)
			}
		})
	}

	t.Run("bad option", func(t *testing.T) {
		srv := agentlooptest.NewTB(t)
		o := genOptions(t, srv)
		o.ToolSearch = "sometimes"
		_, err := agentloop.Query(context.Background(), "hi", o).Result()
		if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), "ToolSearch") {
			t.Errorf("error %v, want ErrInvalidOption naming ToolSearch", err)
		}
	})
}

func countPlain(names []string) int {
	if slices.Contains(names, "echo") {
		return 1
	}
	return 0
}

// TestToolSearchResume: the tools a ToolSearch loaded stay declared when
// the session is resumed.
func TestToolSearchResume(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "ToolSearch", map[string]any{"query": "select:mcp__gen__tool5"}),
		agentlooptest.Text("loaded"),
		agentlooptest.Text("still there"))
	cfg := t.TempDir()
	o := genOptions(t, srv)
	o.NoSessionPersistence, o.ConfigDir = false, cfg
	first, err := agentloop.Query(context.Background(), "load tool5", o).Result()
	if err != nil {
		t.Fatal(err)
	}
	o2 := genOptions(t, srv)
	o2.NoSessionPersistence, o2.ConfigDir, o2.Cwd, o2.Resume = false, cfg, o.Cwd, first.SessionID
	if _, err := agentloop.Query(context.Background(), "again", o2).Result(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__gen__tool5"}, genNames(srv.Requests()[2].ToolNames())); diff != "" {
		t.Errorf("resumed request's deferred tools (-want +got):\n%s", diff)
	}
}
