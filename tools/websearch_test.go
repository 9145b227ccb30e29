package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWebSearchInfo(t *testing.T) {
	sideCheckSchemas(t, "testdata/websearch/schema.json", WebSearch())
	if !WebSearch().Info().ReadOnly {
		t.Error("WebSearch is not read-only")
	}
}

const webSearchHitsJSON = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[` +
	`{"type":"web_search_result","title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26","encrypted_content":"abc","page_age":"2 weeks ago"},` +
	`{"type":"web_search_result","title":"","url":"https://example.com/go","encrypted_content":"def","page_age":null}]}`

const webSearchReminder = "\nWhen you use any of this in your answer, cite the sources as Markdown links ([title](url))."

func TestWebSearchResults(t *testing.T) {
	tests := []struct {
		name  string
		reply agentlooptest.Reply
		in    map[string]any
		want  sideOutcome
		tools string // the tools the request declared, as JSON
	}{{
		name: "links and summary",
		reply: agentlooptest.Blocks(
			model.TextBlock("I'll search for that."),
			agentlooptest.ServerToolUseBlock("srvtoolu_1", "web_search", map[string]any{"query": "go 1.26 release"}),
			agentlooptest.RawBlock(webSearchHitsJSON),
			model.TextBlock("Go 1.26 was released in February."),
			model.TextBlock(" It adds new features."),
		),
		in: map[string]any{"query": "go 1.26 release", "allowed_domains": []string{"go.dev", "example.com"}},
		want: sideOutcome{
			Text: "Web search results for \"go 1.26 release\":\n\nI'll search for that.\n\nLinks from search 1:\n" +
				"- Go 1.26 Release Notes: https://go.dev/doc/go1.26\n- https://example.com/go\n\n" +
				"Go 1.26 was released in February. It adds new features.\n" + webSearchReminder,
			Structured: WebSearchResult{Query: "go 1.26 release", SearchCount: 1, Results: []any{
				"I'll search for that.",
				WebSearchHits{ToolUseID: "srvtoolu_1", Content: []WebSearchLink{
					{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"},
					{Title: "", URL: "https://example.com/go"},
				}},
				"Go 1.26 was released in February. It adds new features.",
			}},
		},
		tools: `[{"type":"web_search_20250305","name":"web_search","max_uses":8,"allowed_domains":["go.dev","example.com"]}]`,
	}, {
		name: "two searches, one empty, one failed",
		reply: agentlooptest.Blocks(
			agentlooptest.ServerToolUseBlock("srvtoolu_1", "web_search", map[string]any{"query": "a"}),
			agentlooptest.RawBlock(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`),
			agentlooptest.ServerToolUseBlock("srvtoolu_2", "web_search", map[string]any{"query": "b"}),
			agentlooptest.RawBlock(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}`),
		),
		in: map[string]any{"query": "obscure thing", "blocked_domains": []string{"spam.example"}},
		want: sideOutcome{
			Text: "Web search results for \"obscure thing\":\n\nSearch 1 found no links.\n\nWeb search error: max_uses_exceeded\n" + webSearchReminder,
			Structured: WebSearchResult{Query: "obscure thing", SearchCount: 2, Results: []any{
				WebSearchHits{ToolUseID: "srvtoolu_1", Content: []WebSearchLink{}},
				"Web search error: max_uses_exceeded",
			}},
		},
		tools: `[{"type":"web_search_20250305","name":"web_search","max_uses":8,"blocked_domains":["spam.example"]}]`,
	}, {
		name:  "nothing at all",
		reply: agentlooptest.Text(""),
		in:    map[string]any{"query": "nothing"},
		want: sideOutcome{
			Text:       "Web search results for \"nothing\":\n\nThe search returned nothing.\n" + webSearchReminder,
			Structured: WebSearchResult{Query: "nothing", Results: []any{}},
		},
		tools: `[{"type":"web_search_20250305","name":"web_search","max_uses":8}]`,
	}, {
		name:  "API error",
		reply: agentlooptest.Error(400, "invalid_request_error", "web search is not enabled"),
		in:    map[string]any{"query": "anything"},
		want: sideOutcome{
			Text:    "The web search failed: API error 400 invalid_request_error: web search is not enabled",
			IsError: true,
		},
		tools: `[{"type":"web_search_20250305","name":"web_search","max_uses":8}]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := agentlooptest.NewTB(t, tc.reply)
			env := &tool.Env{Provider: sideProvider(t, api), Model: "sonnet", State: &tool.State{}}
			got := sideOutcomeOf(sideRun(t, context.Background(), WebSearch(), env, tc.in))
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(WebSearchResult{}, "DurationSeconds")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			req := api.LastRequest()
			if req == nil {
				t.Fatal("no model request")
			}
			if req.Params.Model != "claude-sonnet-5-5" {
				t.Errorf("model %q", req.Params.Model)
			}
			if got, want := req.LastUserText(), "Search the web for: "+tc.in["query"].(string); got != want {
				t.Errorf("user message %q, want %q", got, want)
			}
			var gotTools, wantTools any
			if err := json.Unmarshal(req.Field("tools"), &gotTools); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.tools), &wantTools); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantTools, gotTools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebSearchRefused(t *testing.T) {
	api := agentlooptest.NewTB(t)
	withModel := &tool.Env{Provider: sideProvider(t, api), State: &tool.State{}}
	tests := []struct {
		name string
		env  *tool.Env
		in   map[string]any
		want string
	}{
		{"both domain lists", withModel, map[string]any{"query": "go", "allowed_domains": []string{"a.com"}, "blocked_domains": []string{"b.com"}},
			"Give allowed_domains or blocked_domains, not both in the same search."},
		{"short query", withModel, map[string]any{"query": " g "},
			"The query is too short: give at least two characters to search for."},
		{"no provider", &tool.Env{}, map[string]any{"query": "golang"},
			"Web search is not available: this session has no model provider to run it."},
		{"missing query", withModel, map[string]any{},
			"InputValidationError: WebSearch failed due to the following issue:\nThe required parameter `query` is missing"},
		{"domains not a list", withModel, map[string]any{"query": "go", "allowed_domains": "go.dev"},
			"InputValidationError: WebSearch failed due to the following issue:\nThe parameter `allowed_domains` type is expected as `array` but provided as `string`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sideOutcomeOf(sideRun(t, context.Background(), WebSearch(), tc.env, tc.in))
			if diff := cmp.Diff(sideOutcome{Text: tc.want, IsError: true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if api.Len() != 0 {
		t.Errorf("%d model requests for refused searches", api.Len())
	}
}

func TestWebSearchOptions(t *testing.T) {
	api := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	env := &tool.Env{Provider: sideProvider(t, api), Model: "claude-opus-5-5"}
	r := sideRun(t, context.Background(), WebSearchWith(&WebSearchOptions{Model: "haiku", MaxUses: 2}), env, map[string]any{"query": "go"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	req := api.LastRequest()
	if req.Params.Model != "claude-haiku-5-5" {
		t.Errorf("model %q", req.Params.Model)
	}
	if got := string(req.Field("tools")); got != `[{"max_uses":2,"name":"web_search","type":"web_search_20250305"}]` {
		t.Errorf("tools %s", got)
	}
}
