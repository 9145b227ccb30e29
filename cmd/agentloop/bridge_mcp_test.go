package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHost is a fake SDK host with one in-process server, "calc", a real
// go-sdk server in memory: it answers mcp_message requests with the
// server's replies wrapped in mcp_response, as the TS SDK does.
type mcpHost struct {
	t    *testing.T
	conn sdk.Connection

	mu      sync.Mutex
	methods []string
	waiting map[any]chan *jsonrpc.Response
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func newMCPHost(t *testing.T) *mcpHost {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1.2.3"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("sum=%g", in.A+in.B)}}}, nil, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	h := &mcpHost{t: t, waiting: map[any]chan *jsonrpc.Response{}}
	if h.conn, err = ct.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			m, err := h.conn.Read(context.Background())
			if err != nil {
				return
			}
			if r, ok := m.(*jsonrpc.Response); ok {
				h.mu.Lock()
				ch := h.waiting[r.ID.Raw()]
				delete(h.waiting, r.ID.Raw())
				h.mu.Unlock()
				if ch != nil {
					ch <- r
				}
			}
		}
	}()
	return h
}

// roundTrip writes req to the server and returns its response (nil for a
// notification).
func (h *mcpHost) roundTrip(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	var ch chan *jsonrpc.Response
	if req.ID.IsValid() {
		ch = make(chan *jsonrpc.Response, 1)
		h.mu.Lock()
		h.waiting[req.ID.Raw()] = ch
		h.mu.Unlock()
	}
	if err := h.conn.Write(ctx, req); err != nil || ch == nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// manifest initialises the server as the TS SDK does before the run and
// returns the captured answers.
func (h *mcpHost) manifest() wire.MCPManifest {
	ctx := context.Background()
	id0, _ := jsonrpc.MakeID("pre-0")
	id1, _ := jsonrpc.MakeID("pre-1")
	ini, err := h.roundTrip(ctx, &jsonrpc.Request{ID: id0, Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}`)})
	if err != nil || ini.Error != nil {
		h.t.Fatalf("host initialize: %v %v", err, ini)
	}
	if _, err := h.roundTrip(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		h.t.Fatal(err)
	}
	list, err := h.roundTrip(ctx, &jsonrpc.Request{ID: id1, Method: "tools/list", Params: json.RawMessage(`{}`)})
	if err != nil || list.Error != nil {
		h.t.Fatalf("host tools/list: %v %v", err, list)
	}
	return wire.MCPManifest{InitializeResult: ini.Result, ToolsListResult: list.Result}
}

// Call implements hostCaller for mcp_message.
func (h *mcpHost) Call(ctx context.Context, subtype string, req any) (json.RawMessage, error) {
	r, ok := req.(*wire.MCPMessageRequest)
	if subtype != "mcp_message" || !ok || r.ServerName != "calc" {
		return nil, &hostError{Subtype: subtype, Message: fmt.Sprintf("unexpected request %T to %v", req, r)}
	}
	m, err := jsonrpc.DecodeMessage(r.Message)
	if err != nil {
		return nil, err
	}
	rq := m.(*jsonrpc.Request)
	h.mu.Lock()
	h.methods = append(h.methods, rq.Method)
	h.mu.Unlock()
	resp, err := h.roundTrip(ctx, rq)
	if err != nil {
		return nil, err
	}
	var out []byte
	if resp == nil {
		out = []byte(`{"jsonrpc":"2.0","result":{},"id":0}`)
	} else if out, err = jsonrpc.EncodeMessage(resp); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]json.RawMessage{"mcp_response": out})
}

// TestSDKMCPBridgeLoop: through the real loop, the model calls a tool of
// the host's in-process server; with a manifest only the call (and the
// log level the go-sdk server's logging capability asks for) reaches the
// host, without one the whole handshake does.
func TestSDKMCPBridgeLoop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest bool
		want     []string
	}{
		{"manifest", true, []string{"logging/setLevel", "tools/call"}},
		{"no manifest", false, []string{"initialize", "notifications/initialized", "logging/setLevel", "tools/list", "tools/call"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newMCPHost(t)
			var manifests map[string]wire.MCPManifest
			if tc.manifest {
				manifests = map[string]wire.MCPManifest{"calc": h.manifest()}
			}
			servers, err := sdkMCPBridge(h, []string{"calc"}, manifests)
			if err != nil {
				t.Fatal(err)
			}
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{"a": 2, "b": 3}),
				agentlooptest.Text("done"))
			msgs, err := agentloop.Query(context.Background(), "add", &agentloop.Options{
				Provider: bridgeProvider(t, srv), Cwd: t.TempDir(), MCPServers: servers, MCPConnector: mcp.Connector{},
				AllowedTools: []string{"mcp__calc__add"}, SettingSources: []settings.SettingSource{}}).Collect()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(msgs)
			if !strings.Contains(string(b), "sum=5") {
				t.Errorf("no sum=5 tool result in the stream: %s", b)
			}
			h.mu.Lock()
			got := append([]string(nil), h.methods...)
			h.mu.Unlock()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages to the host (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSDKMCPBridgeErrors: bad registrations fail naming the server; a
// message for a server that is not the host's is refused.
func TestSDKMCPBridgeErrors(t *testing.T) {
	h := &bridgeHost{answer: answerWith(`{}`, nil)}
	for _, tc := range []struct {
		name      string
		names     []string
		manifests map[string]wire.MCPManifest
		want      string
	}{
		{"empty", []string{""}, nil, "empty"},
		{"twice", []string{"a", "a"}, nil, `"a" is named twice`},
		{"stray manifest", []string{"a"}, map[string]wire.MCPManifest{"b": {}}, `"b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sdkMCPBridge(h, tc.names, tc.manifests); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want one naming %s", err, tc.want)
			}
		})
	}
	servers, err := sdkMCPBridge(h, []string{"calc"}, map[string]wire.MCPManifest{"calc": {ToolsListResult: json.RawMessage(`{"tools":[]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, reports := h.snapshot(); len(reports) != 1 || !strings.Contains(reports[0], "toolsListResult without initializeResult") {
		t.Errorf("reports = %q; want the half manifest reported", reports)
	}
	if tr := servers["calc"].Server.(*mcp.HostTransport); tr.ToolsListResult != nil {
		t.Error("a listing without its handshake is used")
	}
	if c := servers["calc"]; c.Type != "sdk" || c.Source != "sdk" {
		t.Errorf("config = %+v", c)
	}
	if _, err := deliverHostMCP(context.Background(), servers, "other", json.RawMessage(`{"jsonrpc":"2.0","method":"x"}`)); err == nil {
		t.Error("a message for an unknown server was accepted")
	}
	// Not connected yet: the transport refuses.
	if _, err := deliverHostMCP(context.Background(), servers, "calc", json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); err == nil || !strings.Contains(err.Error(), mcp.ErrNotConnected.Error()) {
		t.Errorf("deliver before connect = %v; want ErrNotConnected", err)
	}
}

// TestSDKMCPBridgeHostAnswers: an mcp_message answer without mcp_response
// fails the call with a message naming it.
func TestSDKMCPBridgeHostAnswers(t *testing.T) {
	h := &bridgeHost{answer: answerWith(`{"result":{}}`, nil)}
	servers, err := sdkMCPBridge(h, []string{"calc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := servers["calc"].Server.(*mcp.HostTransport)
	_, err = tr.Send(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err == nil || !strings.Contains(err.Error(), "mcp_response") {
		t.Errorf("err = %v; want one naming mcp_response", err)
	}
	calls, _ := h.snapshot()
	if len(calls) != 1 || calls[0].Body["server_name"] != "calc" || calls[0].Body["message"].(map[string]any)["method"] != "tools/list" {
		t.Errorf("calls = %+v", calls)
	}
}
