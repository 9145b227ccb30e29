package mcphost

import (
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     map[string]tool.MCPServerConfig
		err      string
	}{
		{name: "stdio with timeout", in: `{"mcpServers":{"fs":{"command":"fs-server","args":["-v"],"timeout":2500}}}`,
			want: map[string]tool.MCPServerConfig{"fs": {Command: "fs-server", Args: []string{"-v"}, Timeout: 2500 * time.Millisecond}}},
		{name: "short timeout ignored", in: `{"mcpServers":{"fs":{"command":"x","timeout":999}}}`,
			want: map[string]tool.MCPServerConfig{"fs": {Command: "x"}}},
		{name: "http", in: `{"mcpServers":{"h":{"type":"http","url":"http://127.0.0.1:1/mcp"}}}`,
			want: map[string]tool.MCPServerConfig{"h": {Type: tool.MCPHTTP, URL: "http://127.0.0.1:1/mcp"}}},
		{name: "no object", in: `{}`, err: `no "mcpServers" object`},
		{name: "not json", in: `{`, err: "mcp config"},
		{name: "stdio without command", in: `{"mcpServers":{"a":{"type":"stdio"}}}`, err: `server "a": a stdio server needs a command`},
		{name: "sse without url", in: `{"mcpServers":{"a":{"type":"sse"}}}`, err: `an sse server needs a url`},
		{name: "unknown type", in: `{"mcpServers":{"a":{"type":"ws","url":"x"}}}`, err: `unknown type "ws"`},
		{name: "sdk without server", in: `{"mcpServers":{"a":{"type":"sdk"}}}`, err: `an sdk server needs Server`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckServerPolicies(t *testing.T) {
	for _, c := range []struct {
		name string
		p    tool.MCPToolPolicy
		err  string
	}{
		{name: "ok", p: tool.MCPToolPolicy{Name: "get", PermissionPolicy: tool.MCPAlwaysAsk}},
		{name: "no name", p: tool.MCPToolPolicy{PermissionPolicy: tool.MCPAlwaysAsk}, err: "tools[0] has no name"},
		{name: "bad policy", p: tool.MCPToolPolicy{Name: "get", PermissionPolicy: "sometimes"}, err: `unknown permission_policy "sometimes"`},
		{name: "bad org max", p: tool.MCPToolPolicy{Name: "get", OrgMaxPermission: "all"}, err: `unknown org_max_permission "all"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckServer("s", tool.MCPServerConfig{Command: "x", Tools: []tool.MCPToolPolicy{c.p}})
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("err = %v, want %q", err, c.err)
			}
		})
	}
	if err := CheckServer("", tool.MCPServerConfig{Command: "x"}); err == nil {
		t.Error("an empty name passed")
	}
}

func TestPrepare(t *testing.T) {
	env := map[string]string{"MCP_TOOL_TIMEOUT": "1500", "MAX_MCP_OUTPUT_TOKENS": "nope"}
	servers := map[string]tool.MCPServerConfig{
		"stdio": {Command: "x", Tools: []tool.MCPToolPolicy{
			{Name: "a", PermissionPolicy: tool.MCPAlwaysAllow}, {Name: "b", OrgMaxPermission: "ask"}}},
		"sdk":  {Type: tool.MCPSDK, Tools: []tool.MCPToolPolicy{{Name: "c", PermissionPolicy: tool.MCPAlwaysAllow}, {Name: "d", PermissionPolicy: tool.MCPAlwaysDeny}}},
		"slow": {Command: "y", Timeout: time.Minute},
	}
	var reports, options []string
	Prepare(servers, func(k string) string { return env[k] },
		func(s string) { reports = append(reports, s) }, func(s string) { options = append(options, s) })
	want := map[string]tool.MCPServerConfig{
		"stdio": {Command: "x", Timeout: 1500 * time.Millisecond, Tools: []tool.MCPToolPolicy{{Name: "a", PermissionPolicy: tool.MCPAlwaysAllow}}},
		"sdk":   {Type: tool.MCPSDK, Timeout: 1500 * time.Millisecond, Tools: []tool.MCPToolPolicy{{Name: "d", PermissionPolicy: tool.MCPAlwaysDeny}}},
		"slow":  {Command: "y", Timeout: time.Minute},
	}
	if d := cmp.Diff(want, servers); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
	if len(reports) != 2 || len(options) != 1 || !strings.Contains(options[0], "MAX_MCP_OUTPUT_TOKENS") {
		t.Errorf("reports = %q, options = %q", reports, options)
	}
}

func TestDisallowed(t *testing.T) {
	for _, c := range []struct {
		entry, name string
		want        bool
	}{
		{"mcp__gh__get", "mcp__gh__get", true},
		{"mcp__gh", "mcp__gh__get", true},
		{"mcp__g", "mcp__gh__get", false},
		{"mcp__*", "mcp__gh__get", true},
		{"mcp__gh__get_*", "mcp__gh__get_issue", true},
		{"mcp__gh__get_*", "mcp__gh__list", false},
		{"mcp__gh__get(x)", "mcp__gh__get", false},
		{"Bash", "mcp__gh__get", false},
	} {
		if got := Disallowed([]string{c.entry}, c.name); got != c.want {
			t.Errorf("Disallowed(%q, %q) = %v, want %v", c.entry, c.name, got, c.want)
		}
	}
}

func TestExpandEnv(t *testing.T) {
	vars := map[string]string{"HOME": "/home/u", "TOKEN": "t0k"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	in := tool.MCPServerConfig{Command: "${HOME}/bin/srv", Args: []string{"--port", "${PORT:-8080}", "${MISSING}"},
		Env: map[string]string{"T": "${TOKEN}"}, URL: "http://${HOST:-localhost}/${MISSING}", Headers: map[string]string{"A": "Bearer ${TOKEN}"}}
	got, missing := ExpandEnv(in, lookup)
	want := tool.MCPServerConfig{Command: "/home/u/bin/srv", Args: []string{"--port", "8080", ""},
		Env: map[string]string{"T": "t0k"}, URL: "http://localhost/", Headers: map[string]string{"A": "Bearer t0k"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("expanded (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"MISSING"}, missing); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	if in.Args[1] != "${PORT:-8080}" {
		t.Error("ExpandEnv changed its input's args")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"fs":{"command":"x","timeout":2000}}}`))
	f.Add([]byte(`{"mcpServers":{"h":{"type":"http","url":"u","tools":[{"name":"a","permission_policy":"always_ask"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := ParseConfig(data)
		if err != nil {
			return
		}
		for name, c := range servers {
			if err := CheckServer(name, c); err != nil {
				t.Errorf("ParseConfig accepted %q, which CheckServer refuses: %v", name, err)
			}
		}
	})
}
