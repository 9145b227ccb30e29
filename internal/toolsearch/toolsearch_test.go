package toolsearch

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Mode
		err  bool
	}{
		{"", Mode{}, false},
		{"true", Mode{}, false},
		{" TRUE ", Mode{}, false},
		{"false", Mode{Off: true}, false},
		{"0", Mode{Off: true}, false},
		{"auto", Mode{AutoPercent: 10}, false},
		{"auto:25", Mode{AutoPercent: 25}, false},
		{"auto:0", Mode{}, false},
		{"auto:101", Mode{}, true},
		{"auto:x", Mode{}, true},
		{"sometimes", Mode{}, true},
	} {
		got, err := ParseMode(c.in)
		if (err != nil) != c.err || (err != nil && !errors.Is(err, ErrMode)) {
			t.Errorf("ParseMode(%q) error %v, want error %v", c.in, err, c.err)
		}
		if err == nil && got != c.want {
			t.Errorf("ParseMode(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func infos(names ...string) []tool.Info {
	var out []tool.Info
	for _, n := range names {
		out = append(out, tool.Info{Name: n, Description: "does " + n, InputSchema: []byte(`{"type":"object"}`), MCP: strings.HasPrefix(n, "mcp__")})
	}
	return out
}

func names(in []tool.Info) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.Name)
	}
	return out
}

func TestPlan(t *testing.T) {
	all := append(infos("Read", "mcp__a__x", "mcp__a__y"),
		tool.Info{Name: "custom", Defer: true},
		tool.Info{Name: "mcp__a__pinned", MCP: true, AlwaysLoad: true},
		tool.Info{Name: ToolName, Defer: true})
	for _, c := range []struct {
		name   string
		mode   Mode
		window int64
		want   []string
	}{
		{"on", Mode{}, 1000, []string{"mcp__a__x", "mcp__a__y", "custom"}},
		{"off", Mode{Off: true}, 1000, nil},
		// about 100 characters, 25 tokens: 2.5% of 1000 tokens.
		{"auto above", Mode{AutoPercent: 2}, 1000, []string{"mcp__a__x", "mcp__a__y", "custom"}},
		{"auto below", Mode{AutoPercent: 3}, 1000, nil},
	} {
		if diff := cmp.Diff(c.want, names(Plan(c.mode, all, c.window))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestSearch(t *testing.T) {
	c := NewCatalog([]tool.Info{
		{Name: "mcp__github__createIssue", Description: "Open a new issue in a repository."},
		{Name: "mcp__github__list_issues", Description: "List the issues of a repository."},
		{Name: "mcp__slack__post_message", Description: "Post a message to a channel."},
		{Name: "mcp__mail__send", Description: "Send an email; mentions github notifications."},
		{Name: "NotebookEdit", Description: "Edit a Jupyter notebook cell."},
	})
	for _, c2 := range []struct {
		query string
		max   int
		want  []string
	}{
		{"select:mcp__slack__post_message,NotebookEdit", 1, []string{"mcp__slack__post_message", "NotebookEdit"}},
		{"select: notebookedit , nope,NotebookEdit", 0, []string{"NotebookEdit"}},
		{"SELECT:mcp__mail__send", 0, []string{"mcp__mail__send"}},
		{"github", 0, []string{"mcp__github__createIssue", "mcp__github__list_issues", "mcp__mail__send"}},
		{"github", 2, []string{"mcp__github__createIssue", "mcp__github__list_issues"}},
		{"create issue", 0, []string{"mcp__github__createIssue", "mcp__github__list_issues"}},
		{"+slack send", 0, []string{"mcp__slack__post_message"}},
		{"slack send", 0, []string{"mcp__mail__send", "mcp__slack__post_message"}},
		{"jupyter", 0, []string{"NotebookEdit"}},
		{"mcp__mail__send", 0, []string{"mcp__mail__send"}},
		{"weather", 0, nil},
		{"", 0, nil},
	} {
		if diff := cmp.Diff(c2.want, names(c.Search(c2.query, c2.max))); diff != "" {
			t.Errorf("Search(%q, %d) (-want +got):\n%s", c2.query, c2.max, diff)
		}
	}
}

func TestNameWords(t *testing.T) {
	if diff := cmp.Diff([]string{"mcp", "github", "create", "issue", "v2"}, nameWords("mcp__github__createIssue-v2")); diff != "" {
		t.Error(diff)
	}
}

// TestLoaded: only the definitions in successful ToolSearch results count,
// and only for tools of the catalog.
func TestLoaded(t *testing.T) {
	c := NewCatalog(infos("mcp__a__x", "mcp__a__y", "mcp__a__z"))
	yes := true
	found := Render("select:mcp__a__x", infos("mcp__a__x", "Bash"), 3)
	h := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("go")}},
		{Role: "assistant", Content: []model.Content{
			{Type: model.TypeToolUse, ID: "1", Name: ToolName},
			{Type: model.TypeToolUse, ID: "2", Name: ToolName},
			{Type: model.TypeToolUse, ID: "3", Name: "Echo"},
		}},
		{Role: "user", Content: []model.Content{
			{Type: model.TypeToolResult, ToolUseID: "1", Text: found},
			{Type: model.TypeToolResult, ToolUseID: "2", Text: Render("q", infos("mcp__a__y"), 3), IsError: &yes},
			{Type: model.TypeToolResult, ToolUseID: "3", Text: Render("q", infos("mcp__a__z"), 3)},
		}},
	}
	if diff := cmp.Diff(map[string]bool{"mcp__a__x": true}, Loaded(h, c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if Loaded(h, nil) != nil {
		t.Error("a nil catalog loaded tools")
	}
}
