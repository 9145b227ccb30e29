package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	mcpBinOnce sync.Once
	mcpBin     string
	mcpBinErr  error
)

// mcpServerBinary builds the stdio MCP test server of package mcp, once
// per test binary, into the temporary HOME that TestMain removes. The
// build runs with the real HOME so that it uses the real build cache.
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	mcpBinOnce.Do(func() {
		mcpBin = filepath.Join(os.Getenv("HOME"), "mcp-testserver")
		cmd := exec.Command("go", "build", "-o", mcpBin, "github.com/agentloop/agentloop/mcp/internal/testserver/stdio")
		if u, err := user.Current(); err == nil && u.HomeDir != "" {
			cmd.Env = append(os.Environ(), "HOME="+u.HomeDir)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			mcpBinErr = fmt.Errorf("building the MCP test server: %w\n%s", err, out)
		}
	})
	if mcpBinErr != nil {
		t.Fatal(mcpBinErr)
	}
	return mcpBin
}

// mcpRun runs one query and returns its messages.
func mcpRun(t *testing.T, ctx context.Context, opts *agentloop.Options) ([]agentloop.Message, error) {
	t.Helper()
	var msgs []agentloop.Message
	for m, err := range agentloop.Query(ctx, "go", opts) {
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func mcpInitOf(msgs []agentloop.Message) *agentloop.SystemMessage {
	for _, m := range msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "init" {
			return s
		}
	}
	return nil
}

func mcpResult(t *testing.T, srv *agentlooptest.Server, id string) model.Content {
	t.Helper()
	for _, r := range srv.Requests() {
		if c, ok := r.ToolResult(id); ok {
			return c
		}
	}
	t.Fatalf("no tool result for %s", id)
	return model.Content{}
}

func mcpText(c model.Content) string {
	if len(c.Blocks) == 0 {
		return c.Text
	}
	var s []string
	for _, b := range c.Blocks {
		s = append(s, b.Text)
	}
	return strings.Join(s, "\n")
}

// TestMCPStdioServerInTheLoop: a stdio server from Options.MCPServers is
// listed in init (mcp_servers and tools), its tools are declared to the
// model and a call reaches the server; an isError result is an is_error
// tool result; an image is passed through.
func TestMCPStdioServerInTheLoop(t *testing.T) {
	bin := mcpServerBinary(t)
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_1", "mcp__echo__echo", map[string]any{"text": "hello"}),
			agentlooptest.ToolUseBlock("toolu_2", "mcp__echo__fail", map[string]any{}),
			agentlooptest.ToolUseBlock("toolu_3", "mcp__echo__image", map[string]any{})),
		agentlooptest.Text("done"))
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__echo"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"echo": {Command: bin}},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	init := mcpInitOf(msgs)
	if init == nil {
		t.Fatal("no init message")
	}
	if got := init.Init.MCPServers; len(got) != 1 || got[0].Name != "echo" || got[0].Status != "connected" || got[0].Source != "dynamic" {
		t.Errorf("init mcp_servers = %+v", got)
	}
	if !slices.Contains(init.Init.Tools, "mcp__echo__echo") || !slices.Contains(init.Init.Tools, "ListMcpResourcesTool") {
		t.Errorf("init tools = %v", init.Init.Tools)
	}
	if names := srv.Requests()[0].ToolNames(); !slices.Contains(names, "mcp__echo__echo") {
		t.Errorf("first request declares %v", names)
	}
	if c := mcpResult(t, srv, "toolu_1"); mcpText(c) != "echo: hello" || (c.IsError != nil && *c.IsError) {
		t.Errorf("echo result = %+v", c)
	}
	if c := mcpResult(t, srv, "toolu_2"); mcpText(c) != "it broke" || c.IsError == nil || !*c.IsError {
		t.Errorf("fail result = %+v, want is_error", c)
	}
	c := mcpResult(t, srv, "toolu_3")
	if len(c.Blocks) != 2 || c.Blocks[1].Type != model.TypeImage || c.Blocks[1].Source == nil || c.Blocks[1].Source.MediaType != "image/png" {
		t.Errorf("image result = %+v", c)
	}
}

// TestMCPPermissionRules: MCP tools are not auto-approved; mcp__server,
// mcp__server__* and mcp__server__tool allow rules let them run; a deny
// rule stops them, and a disallowed tool is not offered.
func TestMCPPermissionRules(t *testing.T) {
	bin := mcpServerBinary(t)
	for _, tc := range []struct {
		name             string
		allow, disallow  []string
		mode             agentloop.PermissionMode
		wantRun, offered bool
	}{
		{name: "no rule", wantRun: false, offered: true},
		{name: "server rule", allow: []string{"mcp__echo"}, wantRun: true, offered: true},
		{name: "server glob", allow: []string{"mcp__echo__*"}, wantRun: true, offered: true},
		{name: "tool rule", allow: []string{"mcp__echo__echo"}, wantRun: true, offered: true},
		{name: "other tool rule", allow: []string{"mcp__echo__fail"}, wantRun: false, offered: true},
		{name: "disallowed", allow: []string{"mcp__echo"}, disallow: []string{"mcp__echo__echo"}, offered: false},
		{name: "disallowed glob in bypass", disallow: []string{"mcp__*"}, mode: agentloop.PermissionBypass, offered: false},
		{name: "disallowed server in bypass", disallow: []string{"mcp__echo"}, mode: agentloop.PermissionBypass, offered: false},
		{name: "bypass", mode: agentloop.PermissionBypass, wantRun: true, offered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "mcp__echo__echo", map[string]any{"text": "hello"}),
				agentlooptest.Text("done"))
			msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
				AllowedTools: tc.allow, DisallowedTools: tc.disallow, PermissionMode: tc.mode,
				SettingSources: []settings.SettingSource{},
				MCPServers:     map[string]agentloop.MCPServerConfig{"echo": {Command: bin}},
				MCPConnector:   mcp.Connector{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(mcpInitOf(msgs).Init.Tools, "mcp__echo__echo"); got != tc.offered {
				t.Errorf("offered = %v, want %v", got, tc.offered)
			}
			ran := mcpText(mcpResult(t, srv, "toolu_1")) == "echo: hello"
			if ran != tc.wantRun {
				t.Errorf("ran = %v, want %v (result %+v)", ran, tc.wantRun, mcpResult(t, srv, "toolu_1"))
			}
		})
	}
}

// TestMCPHooks: a PreToolUse hook with matcher mcp__.* sees MCP calls by
// their full name and its deny stops the call; PostToolUse sees the
// result.
func TestMCPHooks(t *testing.T) {
	var mu sync.Mutex
	var pre, post []string
	calls := 0
	inproc := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "add"}, func(ctx context.Context, _ *sdk.CallToolRequest, in struct {
		A, B int
	}) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sum"}}}, nil, nil
	})
	hk := map[hooks.Event][]hooks.Matcher{
		hooks.PreToolUse: {{Matcher: "mcp__.*", Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, id string) (hooks.Output, error) {
			mu.Lock()
			defer mu.Unlock()
			p := in.(hooks.PreToolUseInput)
			pre = append(pre, p.ToolName)
			if p.MCPServer == nil || *p.MCPServer != (hooks.MCPServer{Name: "calc", Source: "sdk"}) {
				t.Errorf("PreToolUse mcp_server = %+v, want calc from sdk", p.MCPServer)
			}
			if p.ToolUseID == "toolu_2" {
				return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) {
					o.PermissionDecision = hooks.Deny
					o.PermissionDecisionReason = "not this one"
				}), nil
			}
			return hooks.Output{}, nil
		}}}},
		hooks.PostToolUse: {{Matcher: "mcp__calc__add", Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, id string) (hooks.Output, error) {
			mu.Lock()
			defer mu.Unlock()
			p := in.(hooks.PostToolUseInput)
			post = append(post, p.ToolName)
			if p.MCPServer == nil || p.MCPServer.Name != "calc" {
				t.Errorf("PostToolUse mcp_server = %+v, want calc", p.MCPServer)
			}
			return hooks.Output{}, nil
		}}}},
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{"A": 1, "B": 2}),
		agentlooptest.ToolUse("toolu_2", "mcp__calc__add", map[string]any{"A": 1, "B": 2}),
		agentlooptest.Text("done"))
	if _, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__calc"}, Hooks: hk, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"calc": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"mcp__calc__add", "mcp__calc__add"}; !slices.Equal(pre, want) {
		t.Errorf("PreToolUse saw %v, want %v", pre, want)
	}
	if want := []string{"mcp__calc__add"}; !slices.Equal(post, want) {
		t.Errorf("PostToolUse saw %v, want %v", post, want)
	}
	if calls != 1 {
		t.Errorf("the server ran %d calls, want 1 (the second was denied)", calls)
	}
	if c := mcpResult(t, srv, "toolu_2"); !strings.Contains(mcpText(c), "not this one") {
		t.Errorf("denied call result = %+v", c)
	}
}

// TestMCPInProcessTypedReadOnlyConcurrent: an in-process server with a
// typed tool annotated readOnlyHint; two calls of one reply run at the
// same time (each waits for the other to arrive).
func TestMCPInProcessTypedReadOnlyConcurrent(t *testing.T) {
	type in struct {
		City string `json:"city" jsonschema:"the city"`
	}
	var arrived sync.WaitGroup
	arrived.Add(2)
	inproc := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "forecast", Description: "Forecast for a city",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			arrived.Done()
			done := make(chan struct{})
			go func() { arrived.Wait(); close(done) }()
			select {
			case <-done:
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sunny in " + args.City}}}, nil, nil
			case <-time.After(3 * time.Second):
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "calls did not overlap"}}}, nil, nil
			}
		})
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_1", "mcp__weather__forecast", map[string]any{"city": "Oslo"}),
			agentlooptest.ToolUseBlock("toolu_2", "mcp__weather__forecast", map[string]any{"city": "Rome"})),
		agentlooptest.Text("done"))
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__weather"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"weather": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpInitOf(msgs).Init.MCPServers; len(got) != 1 || got[0].Source != "sdk" || got[0].Status != "connected" {
		t.Errorf("init mcp_servers = %+v", got)
	}
	if c := mcpResult(t, srv, "toolu_1"); mcpText(c) != "sunny in Oslo" {
		t.Errorf("toolu_1 = %+v", c)
	}
	if c := mcpResult(t, srv, "toolu_2"); mcpText(c) != "sunny in Rome" {
		t.Errorf("toolu_2 = %+v", c)
	}
}

// TestMCPCancelInFlightCall: cancelling the run cancels the MCP call in
// flight: the server's handler sees its context end (the client sent
// notifications/cancelled), and the run ends promptly.
func TestMCPCancelInFlightCall(t *testing.T) {
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	inproc := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	sdk.AddTool(inproc, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finished"}}}, nil, nil
		}
	})
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "mcp__slow__wait", map[string]any{}))
	srv.AllowExhausted()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	start := time.Now()
	_, err := mcpRun(t, ctx, &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, ToolSearch: agentloop.ToolSearchOff,
		AllowedTools: []string{"mcp__slow"}, SettingSources: []settings.SettingSource{},
		MCPServers:   map[string]agentloop.MCPServerConfig{"slow": mcp.InProcess(inproc)},
		MCPConnector: mcp.Connector{},
	})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Logf("run ended with %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's handler was not cancelled")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cancelled run took %v", d)
	}
}

// TestMCPWithoutConnector: servers without a connector are reported
// failed in init and by a diagnostic, and the run goes on.
func TestMCPWithoutConnector(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, SettingSources: []settings.SettingSource{},
		MCPServers: map[string]agentloop.MCPServerConfig{"echo": {Command: "echo-server"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpInitOf(msgs).Init.MCPServers; len(got) != 1 || got[0].Status != "failed" {
		t.Errorf("init mcp_servers = %+v", got)
	}
	found := false
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagMCP && strings.Contains(d.Text, "MCPConnector") {
			found = true
		}
	}
	if !found {
		t.Error("no mcp_server diagnostic about the missing connector")
	}
}

// TestMCPBadConfig: a configuration that cannot work is an
// ErrInvalidOption naming the server.
func TestMCPBadConfig(t *testing.T) {
	for name, c := range map[string]agentloop.MCPServerConfig{
		"no command": {},
		"no url":     {Type: "http"},
		"bad type":   {Type: "carrier-pigeon", Command: "x"},
		"no server":  {Type: "sdk"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, agentlooptest.NewTB(t), nil), Cwd: t.TempDir(),
				SettingSources: []settings.SettingSource{},
				MCPServers:     map[string]agentloop.MCPServerConfig{"bad": c}, MCPConnector: mcp.Connector{}})
			if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), `"bad"`) {
				t.Errorf("err = %v, want an ErrInvalidOption naming the server", err)
			}
		})
	}
}

// TestMCPProjectConfigApproval: .mcp.json servers start only when the
// settings approve them, never with StrictMCPConfig or without the project
// setting source.
func TestMCPProjectConfigApproval(t *testing.T) {
	bin := mcpServerBinary(t)
	for _, tc := range []struct {
		name     string
		settings string
		strict   bool
		sources  []settings.SettingSource
		want     []string
	}{
		{name: "not approved", settings: `{}`, want: nil},
		{name: "enabled list", settings: `{"enabledMcpjsonServers":["a"]}`, want: []string{"a"}},
		{name: "enable all less disabled", settings: `{"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["a"]}`, want: []string{"b"}},
		{name: "strict", settings: `{"enableAllProjectMcpServers":true}`, strict: true, want: nil},
		{name: "no project source", settings: `{"enableAllProjectMcpServers":true}`, sources: []settings.SettingSource{settings.Local}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			cfg := `{"mcpServers":{"a":{"command":` + mcpJSONString(bin) + `},"b":{"type":"stdio","command":` + mcpJSONString(bin) + `}}}`
			if err := os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			file := "settings.json"
			if tc.sources != nil {
				file = "settings.local.json"
			}
			if err := os.WriteFile(filepath.Join(cwd, ".claude", file), []byte(tc.settings), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
			sources := tc.sources
			if sources == nil {
				sources = []settings.SettingSource{settings.Project}
			}
			msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{}, SettingSources: sources,
				StrictMCPConfig: tc.strict, MCPConnector: mcp.Connector{},
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range mcpInitOf(msgs).Init.MCPServers {
				if s.Status != "connected" || s.Source != "project" {
					t.Errorf("server %+v, want connected from project", s)
				}
				got = append(got, s.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("servers = %v, want %v", got, tc.want)
			}
		})
	}
}

func mcpJSONString(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
