package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FullName is the name the model and permission rules use for a server's
// tool: mcp__<server>__<tool>, with characters outside [A-Za-z0-9_-]
// replaced by '_'.
func FullName(server, toolName string) string {
	return "mcp__" + normalize(server) + "__" + normalize(toolName)
}

func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// The _meta keys of a tool that agentloop honours.
const (
	metaAlwaysLoad     = "anthropic/alwaysLoad"
	metaMaxResultChars = "anthropic/maxResultSizeChars"
	metaSearchHint     = "anthropic/searchHint"
)

// adapters builds (once) the tools of the server's first listing.
func (s *server) adapters() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.adapted != nil || s.listed == nil {
		return s.adapted
	}
	for _, t := range s.listed {
		s.adapted = append(s.adapted, newAdapter(s, t))
	}
	return s.adapted
}

// adapter is one tool of a server as a tool.Tool.
type adapter struct {
	srv  *server
	name string // the tool's name on the server
	info tool.Info
}

func newAdapter(s *server, t *sdk.Tool) *adapter {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	info := tool.Info{
		Name:        FullName(s.name, t.Name),
		Description: t.Description,
		InputSchema: schema,
		MCP:         true,
		AlwaysLoad:  s.cfg.AlwaysLoad,
	}
	if t.Annotations != nil {
		info.ReadOnly = t.Annotations.ReadOnlyHint
	}
	if v, ok := t.Meta[metaAlwaysLoad].(bool); ok && v {
		info.AlwaysLoad = true
	}
	if v, ok := t.Meta[metaSearchHint].(string); ok {
		info.SearchHint = strings.TrimSpace(v)
	}
	if v, ok := t.Meta[metaMaxResultChars].(float64); ok && v > 0 {
		info.MaxResultChars = int(v)
	}
	s.permissionInfo(t, &info) // policy.go
	return &adapter{srv: s, name: t.Name, info: info}
}

// Info implements tool.Tool.
func (a *adapter) Info() tool.Info { return a.info }

// Run implements tool.Tool: it calls the tool on the server.
func (a *adapter) Run(ctx context.Context, call *tool.Call) (tool.Result, error) {
	args := call.Input
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	return a.srv.call(ctx, a.name, args)
}

// Server reports the configuration name of the tool's server; the session
// uses it for the mcp_server field of hook inputs.
func (a *adapter) Server() string { return a.srv.name }
