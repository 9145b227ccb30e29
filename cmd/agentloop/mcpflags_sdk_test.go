package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The Python Agent SDK declares its in-process servers in --mcp-config as
// {"type": "sdk", "name": ...}: they become host servers (bridged over
// mcp_message), not a configuration error.
func TestMCPConfigSDKServers(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		sdk     []string
		servers []string
		err     string
	}{
		{name: "sdk only", flags: []string{`{"mcpServers": {"util": {"type": "sdk", "name": "util"}}}`}, sdk: []string{"util"}},
		{name: "mixed", flags: []string{`{"mcpServers": {"b": {"type": "sdk", "name": "b"}, "a": {"type": "sdk"}, "s": {"command": "srv"}}}`},
			sdk: []string{"a", "b"}, servers: []string{"s"}},
		{name: "a later stdio server replaces an sdk one", flags: []string{
			`{"mcpServers": {"x": {"type": "sdk"}}}`, `{"mcpServers": {"x": {"command": "srv"}}}`}, servers: []string{"x"}},
		{name: "a later sdk server replaces a stdio one", flags: []string{
			`{"mcpServers": {"x": {"command": "srv"}}}`, `{"mcpServers": {"x": {"type": "sdk"}}}`}, sdk: []string{"x"}},
		{name: "other errors still reported", flags: []string{`{"mcpServers": {"u": {"type": "sdk"}, "s": {"type": "stdio"}}}`}, err: `a stdio server needs a command`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c config
			var err error
			for _, f := range tc.flags {
				if err = c.addMCPConfig(f); err != nil {
					break
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var servers []string
			for n := range c.mcp.servers {
				servers = append(servers, n)
			}
			sort.Strings(servers)
			if diff := cmp.Diff(tc.sdk, c.mcp.sdk, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("sdk servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.servers, servers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("other servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSDKServerNames(t *testing.T) {
	got := sdkServerNames([]string{"a", "b"}, []string{"b", "c"})
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
