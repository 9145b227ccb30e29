package mcphost

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// fakeClients is a connector's result with one server, "gh", whose tools
// the test changes through the watcher.
type fakeClients struct {
	tools []tool.Tool
	watch func(server string, ts []tool.Tool)
}

func (f *fakeClients) Tools() []tool.Tool { return f.tools }
func (f *fakeClients) Status() []tool.MCPServerStatus {
	var names []string
	for _, t := range f.tools {
		names = append(names, t.Info().Name)
	}
	return []tool.MCPServerStatus{{Name: "gh", Status: tool.MCPConnected, Source: "project", Tools: names}}
}
func (f *fakeClients) Reconnect(context.Context, string) error    { return nil }
func (f *fakeClients) Toggle(context.Context, string, bool) error { return nil }
func (f *fakeClients) Close() error                               { return nil }
func (f *fakeClients) WatchTools(w func(string, []tool.Tool))     { f.watch = w }

type fakeConnector struct{ clients *fakeClients }

func (c fakeConnector) ConnectMCP(context.Context, map[string]tool.MCPServerConfig, *tool.Env, time.Duration) (tool.MCPClients, error) {
	return c.clients, nil
}

// fakeLoop records the tools it offers.
type fakeLoop struct {
	mu    sync.Mutex
	names []string
}

func (l *fakeLoop) ToolNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}
func (l *fakeLoop) ReplaceTools(old []string, ts []tool.Tool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = slices.DeleteFunc(l.names, func(n string) bool { return slices.Contains(old, n) })
	for _, t := range ts {
		l.names = append(l.names, t.Info().Name)
	}
	slices.Sort(l.names)
	return nil
}

func mcpTool(name string) tool.Tool {
	type in struct{}
	return tool.New(name, "a test tool", func(context.Context, in, *tool.Call) (tool.Result, error) { return tool.Text("ok"), nil }, nil)
}

func TestHostFollowsToolChanges(t *testing.T) {
	clients := &fakeClients{tools: []tool.Tool{mcpTool("mcp__gh__get"), mcpTool("mcp__gh__list"), mcpTool("mcp__gh__secret")}}
	h, err := Start(context.Background(), Config{Servers: map[string]tool.MCPServerConfig{"gh": {Command: "gh"}},
		Connector: fakeConnector{clients}, Disallowed: []string{"mcp__gh__secret"}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(ts []tool.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Info().Name)
		}
		slices.Sort(out)
		return out
	}
	if d := cmp.Diff([]string{"mcp__gh__get", "mcp__gh__list"}, names(h.Tools())); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if s := h.ServerOf("mcp__gh__get"); s == nil || s.Name != "gh" || s.Source != "project" {
		t.Errorf("ServerOf = %+v", s)
	}
	main := &fakeLoop{names: []string{"Read", "mcp__gh__get", "mcp__gh__list"}}
	h.Watch(main)
	// A subagent that asked for get and new, and a grandchild of it that
	// removes new.
	child := &fakeLoop{names: []string{"Read", "mcp__gh__get"}}
	stopChild := h.Follow(child, "", "a1", []string{"Read", "mcp__gh__get", "mcp__gh__new"}, nil, nil)
	grand := &fakeLoop{names: []string{"Read"}}
	stopGrand := h.Follow(grand, "a1", "a2", nil, []string{"mcp__gh__new"}, nil)
	if d := cmp.Diff([]string{"Read", "mcp__gh__get"}, grand.ToolNames()); d != "" {
		t.Errorf("the grandchild on its way in (-want +got):\n%s", d)
	}

	clients.watch("gh", []tool.Tool{mcpTool("mcp__gh__get"), mcpTool("mcp__gh__new"), mcpTool("mcp__gh__secret")})
	for _, c := range []struct {
		name string
		loop *fakeLoop
		want []string
	}{
		{"main", main, []string{"Read", "mcp__gh__get", "mcp__gh__new"}},
		{"child", child, []string{"Read", "mcp__gh__get", "mcp__gh__new"}},
		{"grandchild", grand, []string{"Read", "mcp__gh__get"}},
	} {
		if d := cmp.Diff(c.want, c.loop.ToolNames()); d != "" {
			t.Errorf("%s after the change (-want +got):\n%s", c.name, d)
		}
	}
	stopGrand()
	stopChild()
	clients.watch("gh", nil)
	if d := cmp.Diff([]string{"Read", "mcp__gh__get"}, child.ToolNames()); d == "" {
		t.Error("a stopped subagent still followed the changes")
	}
	if d := cmp.Diff([]string{"Read"}, main.ToolNames()); d != "" {
		t.Errorf("main after the server dropped its tools (-want +got):\n%s", d)
	}
}

func TestHostWithoutConnector(t *testing.T) {
	var reports []string
	h, err := Start(context.Background(), Config{Servers: map[string]tool.MCPServerConfig{"b": {Command: "b"}, "a": {Command: "a"}},
		Blocked: []tool.MCPServerStatus{{Name: "z", Status: tool.MCPFailed, Error: "blocked"}},
		Report:  func(s string) { reports = append(reports, s) }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range h.Status() {
		got = append(got, s.Name+":"+s.Status)
	}
	if d := cmp.Diff([]string{"a:failed", "b:failed", "z:failed"}, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if len(reports) != 1 || !h.Blocked("z") || h.Blocked("a") || h.Clients() != nil {
		t.Errorf("reports = %q, blocked z = %v", reports, h.Blocked("z"))
	}
	var none *Host
	if none.Tools() != nil || len(none.Status()) != 0 || none.ServerOf("mcp__x__y") != nil {
		t.Error("a nil host is not empty")
	}
	if h, err := Start(context.Background(), Config{}); h != nil || err != nil {
		t.Errorf("Start with nothing = %v, %v; want nil, nil", h, err)
	}
}
