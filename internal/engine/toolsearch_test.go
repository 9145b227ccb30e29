package engine

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// refProvider replies from a script and keeps each request as sent
// (betas included); refs is what its ToolReferences says.
type refProvider struct {
	refs    bool
	replies []*model.Response
	reqs    []model.Request
}

func (p *refProvider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var cp model.Request
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, err
	}
	cp.Betas = slices.Clone(req.Betas)
	p.reqs = append(p.reqs, cp)
	r := p.replies[0]
	p.replies = p.replies[1:]
	return r, nil
}

func (p *refProvider) ToolReferences() bool { return p.refs }

// runToolSearch runs a session with one deferred tool (mcp__s__t) whose
// model loads it with ToolSearch, calls it and ends, against a provider
// that does or does not take tool_reference blocks.
func runToolSearch(t *testing.T, refs bool) (*refProvider, *Session) {
	t.Helper()
	return runToolSearchWith(t, refs, "claude-opus-5-5", false)
}

// runToolSearchWith is runToolSearch with the session's model and
// Config.NoToolReferences.
func runToolSearchWith(t *testing.T, refs bool, modelID string, noRefs bool) (*refProvider, *Session) {
	t.Helper()
	deferred := namedTool("mcp__s__t", "t ran")
	search, cat, replies := searchScript(deferred)
	p := &refProvider{refs: refs, replies: replies}
	s, err := New(Config{Provider: p, Model: modelID, Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
		Tools: []tool.Tool{search, deferred}, Deferred: cat, NoToolReferences: noRefs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(p.reqs))
	}
	return p, s
}

// searchScript returns a ToolSearch tool over a catalog of deferred
// alone, that catalog, and the replies of a model that loads deferred
// with ToolSearch, calls it and ends.
func searchScript(deferred tool.Tool) (tool.Tool, *toolsearch.Catalog, []*model.Response) {
	cat := toolsearch.NewCatalog([]tool.Info{deferred.Info()})
	search := tool.New(toolsearch.ToolName, "Loads deferred tools.", func(ctx context.Context, in struct {
		Query string `json:"query"`
	}, c *tool.Call) (tool.Result, error) {
		return tool.Text(toolsearch.Render(in.Query, cat.Search(in.Query, 5), cat.Len())), nil
	}, nil)
	use := func(id, name, input string) *model.Response {
		return &model.Response{ID: "m_" + id, Model: "claude-opus-5-5", StopReason: "tool_use",
			Content: []model.Content{{Type: model.TypeToolUse, ID: id, Name: name, Input: json.RawMessage(input)}}}
	}
	name := deferred.Info().Name
	return search, cat, []*model.Response{
		use("ts", toolsearch.ToolName, `{"query":"select:`+name+`"}`),
		use("call", name, `{}`),
		{ID: "m_done", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}},
	}
}

// declared lists a request's tools as name, or name+" (deferred)" for
// those declared with defer_loading.
func declared(r model.Request) []string {
	var out []string
	for _, d := range r.Tools {
		n := d.Name
		if d.DeferLoading {
			n += " (deferred)"
		}
		out = append(out, n)
	}
	return out
}

// TestToolSearchReferences: with a provider that loads deferred tools
// itself, ToolSearch's result is a tool_reference block, the loaded tool
// is declared with defer_loading from the next request on, every request
// asks for the tool search beta, and each request has "Tool loaded."
// after the result while the history keeps the result alone.
func TestToolSearchReferences(t *testing.T) {
	p, s := runToolSearch(t, true)
	for i, r := range p.reqs {
		if !slices.Contains(r.Betas, model.ToolSearchBeta) {
			t.Errorf("request %d betas %v lack %s", i, r.Betas, model.ToolSearchBeta)
		}
	}
	wantTools := [][]string{{"ToolSearch"}, {"ToolSearch", "mcp__s__t (deferred)"}, {"ToolSearch", "mcp__s__t (deferred)"}}
	for i, r := range p.reqs {
		if diff := cmp.Diff(wantTools[i], declared(r)); diff != "" {
			t.Errorf("request %d tools (-want +got):\n%s", i, diff)
		}
	}
	result := model.Content{Type: model.TypeToolResult, ToolUseID: "ts", Blocks: []model.Content{model.ToolReference("mcp__s__t")}}
	loaded := model.TextBlock(toolsearch.LoadedText)
	loaded.CacheControl = ephemeral
	if diff := cmp.Diff([]model.Content{result, loaded}, p.reqs[1].Messages[2].Content); diff != "" {
		t.Errorf("request 1's last message (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]model.Content{result, model.TextBlock(toolsearch.LoadedText)}, p.reqs[2].Messages[2].Content); diff != "" {
		t.Errorf("request 2's message 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]model.Content{result}, s.History()[2].Content); diff != "" {
		t.Errorf("history's message 2 (-want +got):\n%s", diff)
	}
}

// TestToolSearchTextWithoutReferences: a provider without tool_reference
// support gets the definitions as text, the tool declared plainly and no
// beta.
func TestToolSearchTextWithoutReferences(t *testing.T) {
	t.Run("provider", func(t *testing.T) { checkTextForm(t, false, "claude-opus-5-5", false) })
	// The API's tool search serves the 4.5 generation and later.
	t.Run("model", func(t *testing.T) { checkTextForm(t, true, "claude-3-5-haiku-20241022", false) })
	t.Run("betas off", func(t *testing.T) { checkTextForm(t, true, "claude-opus-5-5", true) })
}

func checkTextForm(t *testing.T, refs bool, modelID string, noRefs bool) {
	p, _ := runToolSearchWith(t, refs, modelID, noRefs)
	for i, r := range p.reqs {
		if slices.Contains(r.Betas, model.ToolSearchBeta) {
			t.Errorf("request %d asks for %s", i, model.ToolSearchBeta)
		}
	}
	if diff := cmp.Diff([]string{"ToolSearch", "mcp__s__t"}, declared(p.reqs[1])); diff != "" {
		t.Errorf("request 1 tools (-want +got):\n%s", diff)
	}
	content := p.reqs[1].Messages[2].Content
	if len(content) != 1 || content[0].Type != model.TypeToolResult || content[0].Blocks != nil ||
		!slices.Equal(toolsearch.Definitions(content[0].Text, toolsearch.NewCatalog([]tool.Info{namedTool("mcp__s__t", "").Info()})), []string{"mcp__s__t"}) {
		t.Errorf("request 1's last message = %+v, want one text tool_result with the definition", content)
	}
}
