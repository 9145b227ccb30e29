package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"math"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/tool"
)

//go:embed toolsearch.md
var toolSearchDescription string

// toolSearchSchemaJSON is toolSearchSchema converted once, shared by every
// session's ToolSearch tool.
var toolSearchSchemaJSON = json.RawMessage(toolSearchSchema)

const toolSearchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "query": {
      "description": "select:<name>[,<name>...] to load tools by name, or keywords to search their names and descriptions",
      "type": "string"
    },
    "max_results": {
      "description": "The most tools a keyword search loads",
      "type": "number",
      "default": 5
    }
  },
  "required": ["query"],
  "additionalProperties": false
}`

type toolSearchInput struct {
	Query      string  `json:"query"`
	MaxResults float64 `json:"max_results,omitempty"`
}

// ToolCatalog is what the ToolSearch tool searches: the deferred tools of
// a session. It must be safe for concurrent use.
type ToolCatalog interface {
	// Search returns the deferred tools matching query, best first: the
	// named ones for "select:<name>,…", else at most max keyword matches.
	Search(query string, max int) []tool.Info
	// Len is the number of deferred tools.
	Len() int
}

// ToolSearchResult is the structured result (tool_use_result) of a
// ToolSearch call, in the reference's shape.
type ToolSearchResult struct {
	// Matches are the names of the tools the call loaded, best first.
	Matches []string `json:"matches"`
	// Query is the query as given.
	Query string `json:"query"`
	// TotalDeferredTools is the number of deferred tools of the session.
	TotalDeferredTools int `json:"total_deferred_tools"`
}

// ToolSearch returns the ToolSearch tool over the deferred tools of c.
// Its result shows the definitions of the tools it finds; the loop reads
// them back from the conversation and declares those tools in every
// request from the next one on (see internal/toolsearch). The session
// adds this tool itself when it defers tools; it is not one of the
// built-in tools chosen by name.
func ToolSearch(c ToolCatalog) tool.Tool { return toolSearchTool{c} }

// toolSearchTool is a session's ToolSearch tool: the catalog, over one
// tool shared by every session (toolSearchShared), which takes the
// catalog from its call's context. A session keeps 16 bytes for it.
type toolSearchTool struct{ c ToolCatalog }

// toolSearchCatalog is the context key of the catalog of a call.
type toolSearchCatalog struct{}

var toolSearchSharedOnce lazy.Value[tool.Tool] // the value of toolSearchShared, made at its first use

// toolSearchShared returns the ToolSearch tool all sessions share: what
// differs between them (the catalog) comes with each call's context.
func toolSearchShared() tool.Tool { return toolSearchSharedOnce.Get(newToolSearchTool) }

func newToolSearchTool() tool.Tool {
	return tool.New(toolsearch.ToolName, toolSearchDescription,
		func(ctx context.Context, in toolSearchInput, call *tool.Call) (tool.Result, error) {
			c, _ := ctx.Value(toolSearchCatalog{}).(ToolCatalog)
			return runToolSearch(c, in), nil
		}, &tool.Options{
			ReadOnly: true,
			Schema:   toolSearchSchemaJSON,
			// The definitions must reach the model whole: the loop reads
			// them back from the result to declare the tools.
			MaxResultChars: -1,
		})
}

func (t toolSearchTool) Info() tool.Info { return toolSearchShared().Info() }
func (t toolSearchTool) Check() error    { return tool.Check(toolSearchShared()) }

func (t toolSearchTool) Run(ctx context.Context, call *tool.Call) (tool.Result, error) {
	return toolSearchShared().Run(context.WithValue(ctx, toolSearchCatalog{}, t.c), call)
}

func runToolSearch(c ToolCatalog, in toolSearchInput) tool.Result {
	if c == nil || c.Len() == 0 {
		return tool.Error("There are no deferred tools to load: every tool is declared already.")
	}
	max := toolsearch.DefaultMaxResults
	if in.MaxResults > 0 {
		max = int(math.Ceil(min(in.MaxResults, float64(c.Len()))))
	}
	matches := c.Search(in.Query, max)
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.Name
	}
	r := tool.Text(toolsearch.Render(in.Query, matches, c.Len()))
	r.Structured = ToolSearchResult{Matches: names, Query: in.Query, TotalDeferredTools: c.Len()}
	return r
}
