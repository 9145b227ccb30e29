package conversation_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var onDemandBuiltins = []string{"NotebookEdit", "TaskStop", "WebFetch", "WebSearch"}

// deferredList returns the lines of the <deferred-tools> list of a
// request's system text.
func deferredList(r *agentlooptest.Request) []string {
	sys := r.SystemText()
	_, rest, ok := strings.Cut(sys, "<deferred-tools>\n")
	if !ok {
		return nil
	}
	list, _, _ := strings.Cut(rest, "\n</deferred-tools>")
	return strings.Split(list, "\n")
}

// TestToolSearchOnDemandBuiltins: the on-demand built-ins of the default
// set are deferred; core built-ins are declared; a built-in named in
// Options.Tools is declared; tool search off declares them all.
func TestToolSearchOnDemandBuiltins(t *testing.T) {
	cases := []struct {
		name         string
		tools        []string
		search       agentloop.ToolSearchMode
		wantDeclared []string // among the built-ins and ToolSearch
		wantDeferred []string
	}{
		{name: "default set", tools: nil,
			wantDeclared: []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write", "ToolSearch"}, wantDeferred: onDemandBuiltins},
		{name: "default keyword", tools: []string{"default"},
			wantDeclared: []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write", "ToolSearch"}, wantDeferred: onDemandBuiltins},
		{name: "default plus WebFetch named", tools: []string{"default", "WebFetch"},
			wantDeclared: []string{"Bash", "Edit", "Glob", "Grep", "Read", "WebFetch", "Write", "ToolSearch"},
			wantDeferred: []string{"NotebookEdit", "TaskStop", "WebSearch"}},
		{name: "explicit list", tools: []string{"Read", "WebFetch", "NotebookEdit"},
			wantDeclared: []string{"NotebookEdit", "Read", "WebFetch"}},
		{name: "tool search off", tools: nil, search: agentloop.ToolSearchOff,
			wantDeclared: []string{"Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read", "TaskStop", "WebFetch", "WebSearch", "Write"}},
	}
	known := append([]string{"Bash", "Edit", "Glob", "Grep", "Read", "Write", "ToolSearch"}, onDemandBuiltins...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: c.tools, ToolSearch: c.search,
				SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
			var initTools []string
			for m, err := range agentloop.Query(context.Background(), "hi", o) {
				if err != nil {
					t.Fatal(err)
				}
				if s, ok := m.(*agentloop.SystemMessage); ok && s.Init != nil {
					initTools = s.Init.Tools
				}
			}
			req := srv.Requests()[0]
			declared := slices.DeleteFunc(req.ToolNames(), func(n string) bool { return !slices.Contains(known, n) })
			slices.Sort(declared)
			want := slices.Sorted(slices.Values(c.wantDeclared))
			if diff := cmp.Diff(want, declared); diff != "" {
				t.Errorf("declared built-ins (-want +got):\n%s", diff)
			}
			deferred := deferredList(req)
			if diff := cmp.Diff(c.wantDeferred, deferred); diff != "" {
				t.Errorf("deferred list (-want +got):\n%s", diff)
			}
			for _, n := range c.wantDeferred {
				if !slices.Contains(initTools, n) {
					t.Errorf("init tools %q lack deferred %s: it is still the session's tool", initTools, n)
				}
			}
		})
	}
}

// TestToolSearchDeferredBuiltinRuns: a deferred built-in called directly,
// without loading it, runs.
func TestToolSearchDeferredBuiltinRuns(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "TaskStop", map[string]any{"task_id": "nope"}),
		agentlooptest.Text("done"))
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	if _, err := agentloop.Query(context.Background(), "stop it", o).Result(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(srv.Requests()[0].ToolNames(), "TaskStop") {
		t.Fatal("TaskStop is declared; want it deferred")
	}
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if !ok || strings.Contains(res.Text, "No such tool") || !strings.Contains(res.Text, "nope") {
		t.Errorf("TaskStop result %q: want the tool's own answer about task nope", res.Text)
	}
}

// tsLogBuffer is a bytes.Buffer for a slog handler written from several
// goroutines.
type tsLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *tsLogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *tsLogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestToolSearchAutoOff: the default mode is off, with a diagnostic, for a
// model older than 4.5, a base URL that is not Anthropic's (loopback
// counts as Anthropic's) and with experimental betas disabled; an explicit
// mode keeps it on.
func TestToolSearchAutoOff(t *testing.T) {
	cases := []struct {
		name     string
		model    string
		env      map[string]string // process environment
		optsEnv  map[string]string
		mode     agentloop.ToolSearchMode
		builtIn  bool // the session builds its provider from ANTHROPIC_BASE_URL
		baseURL  string
		deferred bool
		diag     string
	}{
		{name: "model 4.5", model: "claude-sonnet-4-5", deferred: true},
		{name: "model 5.5", model: "claude-opus-5-5", deferred: true},
		{name: "model 3.5", model: "claude-3-5-haiku", diag: "claude-3-5-haiku"},
		{name: "model 4.0 dated", model: "claude-sonnet-4-20250514", diag: "claude-sonnet-4-20250514"},
		{name: "model 4.1", model: "claude-opus-4-1", diag: "4.5"},
		{name: "old model, option on", model: "claude-3-5-haiku", mode: agentloop.ToolSearchOn, deferred: true},
		{name: "old model, env true", model: "claude-3-5-haiku", env: map[string]string{"ENABLE_TOOL_SEARCH": "true"}, deferred: true},
		{name: "old model, env auto:1", model: "claude-3-5-haiku", env: map[string]string{"ENABLE_TOOL_SEARCH": "auto:1"}, deferred: true},
		{name: "betas disabled", env: map[string]string{"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1"}, diag: "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"},
		{name: "betas disabled in Options.Env", optsEnv: map[string]string{"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "true"}, diag: "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"},
		{name: "betas disabled, option on", env: map[string]string{"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1"}, mode: agentloop.ToolSearchOn, deferred: true},
		{name: "loopback base URL", builtIn: true, deferred: true},
		{name: "gateway base URL", builtIn: true, baseURL: "https://llm-gateway.example.com", diag: "llm-gateway.example.com"},
		{name: "gateway base URL, env true", builtIn: true, baseURL: "https://llm-gateway.example.com",
			env: map[string]string{"ENABLE_TOOL_SEARCH": "true"}, deferred: true},
		{name: "Anthropic base URL", builtIn: true, baseURL: "https://api.anthropic.com", deferred: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			var log tsLogBuffer
			o := genOptions(t, srv)
			o.Model, o.ToolSearch, o.Env = c.model, c.mode, c.optsEnv
			o.Logger = slog.New(slog.NewTextHandler(&log, nil))
			if c.builtIn {
				o.Provider = nil
				t.Setenv("ANTHROPIC_API_KEY", "sk-test")
				u := c.baseURL
				if u == "" {
					u = srv.URL
				}
				t.Setenv("ANTHROPIC_BASE_URL", u)
			}
			cl, err := agentloop.NewClient(o)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			logged := log.String()
			off := strings.Contains(logged, "tool search is off by default")
			if off == c.deferred {
				t.Errorf("auto-off diagnostic %v, want %v; log:\n%s", off, !c.deferred, logged)
			}
			if c.diag != "" && !strings.Contains(logged, c.diag) {
				t.Errorf("diagnostic does not name %q; log:\n%s", c.diag, logged)
			}
			if c.baseURL != "" {
				return // no request: the gateway does not exist
			}
			if _, err := cl.Query(context.Background(), "hi").Result(); err != nil {
				t.Fatal(err)
			}
			names := srv.Requests()[0].ToolNames()
			if got := slices.Contains(names, "ToolSearch"); got != c.deferred {
				t.Errorf("ToolSearch declared %v, want %v (%d tools)", got, c.deferred, len(names))
			}
		})
	}
}

// TestToolSearchHint: an MCP tool's anthropic/searchHint is shown beside
// its name in the deferred list and ranks it in keyword searches.
func TestToolSearchHint(t *testing.T) {
	type in struct {
		X string `json:"x" jsonschema:"any text"`
	}
	inproc := sdk.NewServer(&sdk.Implementation{Name: "cal", Version: "1"}, nil)
	add := func(name, desc string, meta sdk.Meta) {
		sdk.AddTool(inproc, &sdk.Tool{Name: name, Description: desc, Meta: meta},
			func(ctx context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil, nil
			})
	}
	add("viewer", "Shows a calendar.", nil)
	add("op_a", "Does operation A.", sdk.Meta{"anthropic/searchHint": "schedule   meetings,\nbook a calendar slot"})
	for i := range 5 {
		add(fmt.Sprintf("filler%d", i), "Unrelated filler.", nil)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "ToolSearch", map[string]any{"query": "calendar", "max_results": 2}),
		agentlooptest.ToolUse("toolu_2", "ToolSearch", map[string]any{"query": "meetings"}),
		agentlooptest.Text("done"))
	if _, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Read"},
		SettingSources: []settings.SettingSource{},
		MCPServers:     map[string]agentloop.MCPServerConfig{"cal": mcp.InProcess(inproc)},
		MCPConnector:   mcp.Connector{},
	}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if !slices.Contains(deferredList(reqs[0]), "mcp__cal__op_a: schedule meetings, book a calendar slot") {
		t.Errorf("deferred list %q lacks op_a with its hint on one line", deferredList(reqs[0]))
	}
	if !slices.Contains(deferredList(reqs[0]), "mcp__cal__viewer") {
		t.Errorf("deferred list %q lacks the plain name of viewer", deferredList(reqs[0]))
	}
	r1, _ := reqs[1].ToolResult("toolu_1")
	r1.Text = strings.ReplaceAll(r1.Text, `"x"`, `"text"`)
	if got := loadedNames(t, r1); !cmp.Equal(got, []string{"mcp__cal__op_a", "mcp__cal__viewer"}) {
		t.Errorf(`"calendar" loaded %q, want op_a (hint word) before viewer (description word)`, got)
	}
	r2, _ := reqs[2].ToolResult("toolu_2")
	r2.Text = strings.ReplaceAll(r2.Text, `"x"`, `"text"`)
	if got := loadedNames(t, r2); !cmp.Equal(got, []string{"mcp__cal__op_a"}) {
		t.Errorf(`"meetings" loaded %q, want op_a, found by its hint alone`, got)
	}
}

// TestToolSearchUnloadedByCompaction: a tool loaded by ToolSearch is no
// longer declared once compaction has summarised the ToolSearch result
// away, yet a direct call of it still runs.
func TestToolSearchUnloadedByCompaction(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	var mu sync.Mutex
	script := []agentlooptest.Reply{
		agentlooptest.ToolUse("toolu_1", "ToolSearch", map[string]any{"query": "select:mcp__gen__tool7"}),
		agentlooptest.Text("loaded"),
		agentlooptest.ToolUse("toolu_big", "big", map[string]any{"n": 1}),
		agentlooptest.Text("filled"),
		agentlooptest.ToolUse("toolu_2", "mcp__gen__tool7", map[string]any{"text": "again"}),
		agentlooptest.Text("done"),
	}
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if isSummary(r) {
			return agentlooptest.Text("SUMMARY: tool7 was loaded earlier."), true
		}
		if len(script) == 0 {
			return agentlooptest.Text("unexpected request"), true
		}
		rep := script[0]
		script = script[1:]
		return rep, true
	})
	// A 40 KB result (10k tokens by the estimate) sent inline, more than
	// the 6.6k tokens that compaction keeps verbatim in a 40k window: the
	// ToolSearch result before it is summarised.
	big := agentloop.NewTool("big", "Returns a large output.", func(ctx context.Context, in bigIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.TextResult(strings.Repeat("lorem ipsum ", 40_000/12)), nil
	}, &agentloop.ToolOptions{ReadOnly: true, MaxResultChars: -1})
	o := genOptions(t, srv)
	o.CustomTools = append(o.CustomTools, big)
	o.AllowedTools = append(o.AllowedTools, "big")
	o.AutoCompactWindow = 40_000
	cl, err := agentloop.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for _, p := range []string{"load tool7", "fill the context", "/compact", "use tool7"} {
		if _, err := cl.Query(ctx, p).Result(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	var mains []*agentlooptest.Request
	for _, r := range srv.Requests() {
		if !isSummary(r) {
			mains = append(mains, r)
		}
	}
	if len(mains) != 6 {
		t.Fatalf("%d conversation requests, want 6", len(mains))
	}
	if !slices.Contains(mains[3].ToolNames(), "mcp__gen__tool7") {
		t.Errorf("before compaction tool7 is not declared: %q", genNames(mains[3].ToolNames()))
	}
	for _, m := range mains[4].Params.Messages {
		for _, b := range m.Content {
			if b.Name == "ToolSearch" {
				t.Fatal("compaction kept the ToolSearch exchange; the test needs it summarised")
			}
		}
	}
	if got := genNames(mains[4].ToolNames()); len(got) > 0 {
		t.Errorf("after compaction %q are still declared; the summary dropped the ToolSearch result", got)
	}
	if !slices.Contains(deferredList(mains[4]), "mcp__gen__tool7") {
		t.Errorf("after compaction the deferred list lacks tool7")
	}
	res, _ := mains[5].ToolResult("toolu_2")
	if res.Text != "tool7 ran: again" || (res.IsError != nil && *res.IsError) {
		t.Errorf("direct call after compaction = %q (is_error %v), want it to run", res.Text, res.IsError)
	}
}
