package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
)

//go:embed websearch.md
var webSearchDescription string

const webSearchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "query": {"description": "What to search the web for.", "type": "string"},
    "allowed_domains": {"description": "Search only these sites (domain names such as example.com). Cannot be combined with blocked_domains.", "type": "array", "items": {"type": "string"}},
    "blocked_domains": {"description": "Leave results from these sites out (domain names such as example.com). Cannot be combined with allowed_domains.", "type": "array", "items": {"type": "string"}}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// WebSearch defaults; see [WebSearchOptions].
const (
	WebSearchToolType       = "web_search_20250305"
	WebSearchDefaultMaxUses = 8
	webSearchMaxTokens      = 8192
)

// WebSearchOptions configure the WebSearch tool. The zero value of every
// field means its default.
type WebSearchOptions struct {
	// Model runs the search, as an id or alias. Empty: the session's model
	// (tool.Env.Model).
	Model string
	// MaxUses is the most searches the server may run for one call
	// (default 8).
	MaxUses int
}

type webSearchInput struct {
	Query          string   `json:"query"`
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	BlockedDomains []string `json:"blocked_domains,omitempty"`
}

// WebSearchResult is the tool_use_result of a WebSearch call. Each element
// of Results is a [WebSearchHits] (the links one search found) or a string
// (the model's text between searches, or a search error).
type WebSearchResult struct {
	Query           string  `json:"query"`
	Results         []any   `json:"results"`
	DurationSeconds float64 `json:"durationSeconds"`
	SearchCount     int     `json:"searchCount"`
}

// WebSearchHits are the links found by one server-side search.
type WebSearchHits struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   []WebSearchLink `json:"content"`
}

// WebSearchLink is one search hit.
type WebSearchLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// WebSearch returns the WebSearch tool with the default options. See
// [WebSearchWith].
func WebSearch() tool.Tool { return WebSearchWith(nil) }

// WebSearchWith returns the WebSearch tool configured by opts (nil for the
// defaults).
//
// The tool searches through the Messages API's server-side web search: it
// sends one request through the session's provider, declaring the server
// tool (type web_search_20250305, at most MaxUses searches, with the domain
// filters of the call) and asking for a search for the query. The links of
// the web_search_tool_result blocks of the reply and the model's text are
// reported back.
func WebSearchWith(opts *WebSearchOptions) tool.Tool {
	var o WebSearchOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxUses <= 0 {
		o.MaxUses = WebSearchDefaultMaxUses
	}
	return tool.New("WebSearch", webSearchDescription,
		func(ctx context.Context, in webSearchInput, call *tool.Call) (tool.Result, error) {
			return runWebSearch(ctx, o, in, call)
		},
		&tool.Options{ReadOnly: true, Schema: json.RawMessage(webSearchSchema)})
}

func runWebSearch(ctx context.Context, o WebSearchOptions, in webSearchInput, call *tool.Call) (tool.Result, error) {
	start := time.Now()
	query := strings.TrimSpace(in.Query)
	switch {
	case utf8.RuneCountInString(query) < 2:
		return tool.Error("The query is too short: give at least two characters to search for."), nil
	case len(in.AllowedDomains) > 0 && len(in.BlockedDomains) > 0:
		return tool.Error("Give allowed_domains or blocked_domains, not both in the same search."), nil
	case call.Env.Provider == nil:
		return tool.Error("Web search is not available: this session has no model provider to run it."), nil
	}
	modelID := o.Model
	if modelID == "" {
		modelID = call.Env.Model
	}
	extra := map[string]any{"max_uses": o.MaxUses}
	if len(in.AllowedDomains) > 0 {
		extra["allowed_domains"] = in.AllowedDomains
	}
	if len(in.BlockedDomains) > 0 {
		extra["blocked_domains"] = in.BlockedDomains
	}
	resp, err := call.Env.Provider.Stream(ctx, &model.Request{
		Model:     pricing.Resolve(modelID),
		MaxTokens: webSearchMaxTokens,
		System: []model.Content{model.TextBlock("You carry out web searches for another assistant. " +
			"Use the web_search tool to find what the request asks for, then summarise the findings briefly.")},
		Messages: []model.Message{{Role: "user", Content: []model.Content{
			model.TextBlock("Search the web for: " + query),
		}}},
		Tools: []model.ToolDef{{Type: WebSearchToolType, Name: "web_search", Extra: extra}},
	}, model.NopHandler{})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Error(fmt.Sprintf("The web search failed: %v", err)), nil
	}

	res := webSearchCollect(resp.Content)
	res.Query = in.Query
	res.DurationSeconds = time.Since(start).Seconds()
	r := tool.Text(webSearchText(in.Query, res.Results))
	r.Structured = res
	return r, nil
}

// webSearchCollect turns the reply's blocks into results: the hits of each
// web_search_tool_result, and the text between them.
func webSearchCollect(blocks []model.Content) WebSearchResult {
	res := WebSearchResult{Results: []any{}}
	var text strings.Builder
	flush := func() {
		if s := strings.TrimSpace(text.String()); s != "" {
			res.Results = append(res.Results, s)
		}
		text.Reset()
	}
	for _, b := range blocks {
		switch b.Type {
		case model.TypeText:
			text.WriteString(b.Text)
		case model.TypeServerToolUse:
			if b.Name == "web_search" {
				res.SearchCount++
			}
		case model.TypeWebSearchResult:
			flush()
			res.Results = append(res.Results, webSearchHitsOf(b.Raw))
		}
	}
	flush()
	return res
}

// webSearchHitsOf decodes a web_search_tool_result block: its hits, or a
// string describing the search's error.
func webSearchHitsOf(raw json.RawMessage) any {
	var blk struct {
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &blk); err != nil {
		return "Web search error: the result could not be read."
	}
	var hits []struct {
		Type  string `json:"type"`
		Title string `json:"title"`
		URL   string `json:"url"`
	}
	if err := json.Unmarshal(blk.Content, &hits); err == nil {
		out := WebSearchHits{ToolUseID: blk.ToolUseID, Content: []WebSearchLink{}}
		for _, h := range hits {
			if h.URL == "" {
				continue
			}
			out.Content = append(out.Content, WebSearchLink{Title: h.Title, URL: h.URL})
		}
		return out
	}
	var fail struct {
		ErrorCode string `json:"error_code"`
	}
	if json.Unmarshal(blk.Content, &fail) == nil && fail.ErrorCode != "" {
		return "Web search error: " + fail.ErrorCode
	}
	return "Web search error: the result could not be read."
}

// webSearchText is what the model is told: each search's links, the
// summary text, and a reminder to cite the sources.
func webSearchText(query string, results []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search results for %q:\n", query)
	n := 0
	for _, r := range results {
		b.WriteString("\n")
		switch r := r.(type) {
		case string:
			b.WriteString(r)
			b.WriteString("\n")
		case WebSearchHits:
			n++
			if len(r.Content) == 0 {
				fmt.Fprintf(&b, "Search %d found no links.\n", n)
				continue
			}
			fmt.Fprintf(&b, "Links from search %d:\n", n)
			for _, l := range r.Content {
				if title := strings.TrimSpace(l.Title); title != "" {
					fmt.Fprintf(&b, "- %s: %s\n", title, l.URL)
				} else {
					fmt.Fprintf(&b, "- %s\n", l.URL)
				}
			}
		}
	}
	if len(results) == 0 {
		b.WriteString("\nThe search returned nothing.\n")
	}
	b.WriteString("\nWhen you use any of this in your answer, cite the sources as Markdown links ([title](url)).")
	return b.String()
}
