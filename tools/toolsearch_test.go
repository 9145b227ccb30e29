package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestToolSearchTool: max_results bounds keyword searches (default 5),
// the structured result has the reference's shape, and a session without
// deferred tools gets an error result.
func TestToolSearchTool(t *testing.T) {
	var infos []tool.Info
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		infos = append(infos, tool.Info{Name: "mcp__s__" + n, Description: "widget tool " + n, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	ts := ToolSearch(toolsearch.NewCatalog(infos))
	if !ts.Info().ReadOnly || ts.Info().Name != "ToolSearch" {
		t.Fatalf("info %+v", ts.Info())
	}
	for _, c := range []struct {
		input string
		want  []string
	}{
		{`{"query":"widget"}`, []string{"mcp__s__a", "mcp__s__b", "mcp__s__c", "mcp__s__d", "mcp__s__e"}},
		{`{"query":"widget","max_results":1.5}`, []string{"mcp__s__a", "mcp__s__b"}},
		{`{"query":"select:mcp__s__g"}`, []string{"mcp__s__g"}},
		{`{"query":"nothing"}`, []string{}},
	} {
		res, err := ts.Run(context.Background(), &tool.Call{Input: json.RawMessage(c.input)})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.input, err, res)
		}
		got := res.Structured.(ToolSearchResult)
		if diff := cmp.Diff(c.want, got.Matches); diff != "" || got.TotalDeferredTools != 7 {
			t.Errorf("%s: total %d, matches (-want +got):\n%s", c.input, got.TotalDeferredTools, diff)
		}
		if len(c.want) == 0 && !strings.Contains(res.Text(), "No deferred tool matches") {
			t.Errorf("%s: text %q", c.input, res.Text())
		}
	}
	res, err := ToolSearch(toolsearch.NewCatalog(nil)).Run(context.Background(), &tool.Call{Input: json.RawMessage(`{"query":"x"}`)})
	if err != nil || !res.IsError {
		t.Errorf("empty catalog: %v %+v, want an error result", err, res)
	}
}
