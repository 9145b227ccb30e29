package main

// For the driver (h8): a host→CLI mcp_message request (a message the
// host's server starts, such as notifications/tools/list_changed) goes
// to deliverHostMCP with the configurations sdkMCPBridge returned; its
// result is the mcp_response to answer with.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/mcp"
)

// sdkMCPBridge returns the configurations of the host's in-process MCP
// servers (initialize's sdkMcpServers): each is an "sdk" server whose
// transport (mcp.HostTransport) sends every JSON-RPC message of the
// engine's MCP client as mcp_message {server_name, message} and reads
// the answer's mcp_response as the server's reply. A server with a
// manifest (sdkMcpServerManifests) is not asked initialize and tools/list:
// the manifest's answers are used, as the reference does (a manifest
// with a listing but no initialize answer is reported and not used).
//
// It fails on an empty or repeated name and on a manifest of a server
// that is not named, naming it.
func sdkMCPBridge(h hostCaller, names []string, manifests map[string]wire.MCPManifest) (map[string]agentloop.MCPServerConfig, error) {
	out := make(map[string]agentloop.MCPServerConfig, len(names))
	for _, name := range names {
		if name == "" {
			return nil, fmt.Errorf("sdkMcpServers: an empty server name")
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("sdkMcpServers: %q is named twice", name)
		}
		t := &mcp.HostTransport{Send: hostMCPSend(h, name)}
		if m, ok := manifests[name]; ok {
			t.InitializeResult = nonNull(m.InitializeResult)
			if t.InitializeResult != nil {
				t.ToolsListResult = nonNull(m.ToolsListResult)
			} else if nonNull(m.ToolsListResult) != nil {
				// A listing without the handshake it came from is not
				// used: the client initialises over the host and lists
				// again.
				report(h, agentloop.DiagMCP, fmt.Sprintf("The manifest of %s has toolsListResult without initializeResult; the server is initialised and listed over the host instead.", name))
			}
		}
		out[name] = mcp.HostServer(t)
	}
	var stray []string
	for name := range manifests {
		if _, ok := out[name]; !ok {
			stray = append(stray, name)
		}
	}
	if len(stray) > 0 {
		sort.Strings(stray)
		return nil, fmt.Errorf("sdkMcpServerManifests: %q are not among sdkMcpServers", stray)
	}
	return out, nil
}

// hostMCPSend is the HostSend of the server name: one mcp_message
// request per message.
func hostMCPSend(h hostCaller, name string) mcp.HostSend {
	return func(ctx context.Context, msg json.RawMessage) (json.RawMessage, error) {
		raw, err := h.Call(ctx, "mcp_message", &wire.MCPMessageRequest{ServerName: name, Message: msg})
		if err != nil {
			return nil, fmt.Errorf("mcp_message to %s: %w", name, err)
		}
		resp, err := wire.DecodeMCPResponse(raw)
		if err != nil {
			return nil, fmt.Errorf("mcp_message to %s: %w", name, err)
		}
		return resp, nil
	}
}

// deliverHostMCP hands a message the host's server started (a host→CLI
// mcp_message request) to the engine's client of that server, and returns
// the answer for the host: the client's JSON-RPC response to a request,
// or {"jsonrpc":"2.0","result":{},"id":0} for a notification (what the SDK
// itself answers to notifications).
func deliverHostMCP(ctx context.Context, servers map[string]agentloop.MCPServerConfig, name string, msg json.RawMessage) (json.RawMessage, error) {
	c, ok := servers[name]
	t, isHost := c.Server.(*mcp.HostTransport)
	if !ok || !isHost {
		return nil, fmt.Errorf("mcp_message: no in-process server %q of the host", name)
	}
	resp, err := t.Deliver(ctx, msg)
	if err != nil {
		return nil, fmt.Errorf("mcp_message to the client of %s: %w", name, err)
	}
	if resp == nil {
		resp = json.RawMessage(`{"jsonrpc":"2.0","result":{},"id":0}`)
	}
	return resp, nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if b := bytes.TrimSpace(raw); len(b) == 0 || string(b) == "null" {
		return nil
	}
	return raw
}

// sdkServerNames is the host's servers: those of --mcp-config of type
// "sdk" (the Python Agent SDK's way) followed by initialize's
// sdkMcpServers (the TypeScript SDK's way), each name once.
func sdkServerNames(fromFlags, fromInit []string) []string {
	out := slices.Clone(fromFlags)
	for _, n := range fromInit {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// bridgeSDKMCP adds the host's servers names to o.MCPServers when no
// initialize request came (its manifests are nil then).
func (d *streamDriver) bridgeSDKMCP(o *agentloop.Options, names []string, manifests map[string]wire.MCPManifest) error {
	s, err := sdkMCPBridge(d.host, names, manifests)
	if err != nil {
		return fmt.Errorf("--mcp-config: %w", err)
	}
	servers := map[string]agentloop.MCPServerConfig{}
	maps.Copy(servers, o.MCPServers)
	maps.Copy(servers, s)
	o.MCPServers = servers
	d.mcpMu.Lock()
	d.sdkMCP = s
	d.mcpMu.Unlock()
	return nil
}
