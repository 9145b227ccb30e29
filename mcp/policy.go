package mcp

import (
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaRequiresUser is the _meta key that marks a tool needing a person on
// every call (tool.Info.RequiresUserInteraction).
const metaRequiresUser = "anthropic/requiresUserInteraction"

// permissionInfo sets what the session's permission check needs to know
// of tool t: whether it needs a person on every call, and the permission
// policy the server's configuration gives it (by the tool's name on the
// server, or its full name). The session has already checked the
// policies (and dropped those it does not honour).
func (s *server) permissionInfo(t *sdk.Tool, info *tool.Info) {
	if v, ok := t.Meta[metaRequiresUser].(bool); ok && v {
		info.RequiresUserInteraction = true
	}
	for _, p := range s.cfg.Tools {
		if p.Name == t.Name || p.Name == info.Name {
			info.PermissionPolicy = p.PermissionPolicy
		}
	}
}
