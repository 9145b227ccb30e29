package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The names of the resource tools, as the reference names them.
const (
	ListResourcesTool = "ListMcpResourcesTool"
	ReadResourceTool  = "ReadMcpResourceTool"
)

// listResources is the ListMcpResourcesTool tool: the resources of one
// server or of all.
type listResources struct{ cl *Clients }

func (*listResources) Info() tool.Info {
	return tool.Info{
		Name: ListResourcesTool,
		Description: "Lists the resources that the connected MCP servers offer (uri, name, mime type, " +
			"description and server). Give server to list only that server's resources.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string",` +
			`"description":"Only list the resources of this server"}},"additionalProperties":false}`),
		ReadOnly: true,
	}
}

// resourceEntry is one listed resource.
type resourceEntry struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
	Server      string `json:"server"`
}

func (l *listResources) Run(ctx context.Context, call *tool.Call) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.Error("invalid input: " + err.Error()), nil
	}
	names := l.cl.order
	if in.Server != "" {
		if _, ok := l.cl.servers[in.Server]; !ok {
			return tool.Error(fmt.Sprintf("Server %q not found. Available servers: %s", in.Server, strings.Join(l.cl.order, ", "))), nil
		}
		names = []string{in.Server}
	}
	out := []resourceEntry{}
	var problems []string
	for _, name := range names {
		s := l.cl.servers[name]
		entries, err := s.listResources(ctx)
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, entries...)
	}
	b, _ := json.Marshal(out)
	if len(problems) > 0 && in.Server != "" {
		return tool.Error(strings.Join(problems, "\n")), nil
	}
	r := tool.Text(string(b))
	r.Structured = out
	if len(problems) > 0 {
		r.Content = append(r.Content, model.TextBlock("Some servers could not be listed:\n"+strings.Join(problems, "\n")))
	}
	return r, nil
}

// listResources lists the server's resources; a server without the
// resources capability has none.
func (s *server) listResources(ctx context.Context) ([]resourceEntry, error) {
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	has := s.hasRes
	s.mu.Unlock()
	if !has {
		return nil, nil
	}
	var out []resourceEntry
	params := &sdk.ListResourcesParams{}
	for {
		res, err := sess.ListResources(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: listing resources: %w", s.name, err)
		}
		for _, r := range res.Resources {
			out = append(out, resourceEntry{URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description, Server: s.name})
		}
		if res.NextCursor == "" {
			return out, nil
		}
		params.Cursor = res.NextCursor
	}
}

// readResource is the ReadMcpResourceTool tool.
type readResource struct{ cl *Clients }

func (*readResource) Info() tool.Info {
	return tool.Info{
		Name:        ReadResourceTool,
		Description: "Reads a resource of an MCP server by its URI (see ListMcpResourcesTool).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"The server name"},` +
			`"uri":{"type":"string","description":"The resource URI"}},"required":["server","uri"],"additionalProperties":false}`),
		ReadOnly: true,
	}
}

func (r *readResource) Run(ctx context.Context, call *tool.Call) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.Error("invalid input: " + err.Error()), nil
	}
	s, ok := r.cl.servers[in.Server]
	if !ok {
		return tool.Error(fmt.Sprintf("Server %q not found. Available servers: %s", in.Server, strings.Join(r.cl.order, ", "))), nil
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Error(err.Error()), nil
	}
	res, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: in.URI})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Error(fmt.Sprintf("MCP server %q: reading %s: %v", in.Server, in.URI, err)), nil
	}
	out := tool.Result{}
	for _, c := range res.Contents {
		if c != nil {
			out.Content = append(out.Content, resourceBlock(c))
		}
	}
	if len(out.Content) == 0 {
		out.Content = []model.Content{model.TextBlock("")}
	}
	for _, c := range out.Content {
		if c.Type != model.TypeText {
			out.ListContent = true
		}
	}
	return out, nil
}
