package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeHost plays the SDK host process: it runs a real go-sdk server in
// memory and answers each message of the HostTransport with the server's
// reply, as the TS SDK answers mcp_message requests. Messages the server
// starts go to the transport's Deliver.
type fakeHost struct {
	t    *testing.T
	srv  *sdk.Server
	ss   *sdk.ServerSession
	conn sdk.Connection
	tr   *mcp.HostTransport

	mu      sync.Mutex
	methods []string                                 // what the transport sent, in order
	waiting map[any]chan *jsonrpc.Response           // by request id
	fail    func(method string) error                // non-nil error: the host answers with it
	block   func(ctx context.Context, method string) // if set, runs before a request goes to the server
	seen    map[string]chan struct{}                 // closed when a method is first seen
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func calcServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1.2.3"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *sdk.CallToolRequest, in addArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("sum=%g", in.A+in.B)}}}, nil, nil
		})
	return srv
}

// newFakeHost starts the host's server. With manifest, the host first
// initialises the server itself and puts its captured answers in the
// transport, as the TS SDK's sdkMcpServerManifests do.
func newFakeHost(t *testing.T, manifest bool) *fakeHost {
	t.Helper()
	ctx := context.Background()
	h := &fakeHost{t: t, srv: calcServer(), waiting: map[any]chan *jsonrpc.Response{}, seen: map[string]chan struct{}{}}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := h.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	h.ss = ss
	h.conn, err = ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.tr = &mcp.HostTransport{Send: h.send}
	go h.read()
	if manifest {
		h.tr.InitializeResult = h.raw("initialize", "pre-0", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}`)
		h.write(&jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
		h.tr.ToolsListResult = h.raw("tools/list", "pre-1", `{}`)
	}
	return h
}

func (h *fakeHost) write(m jsonrpc.Message) {
	if err := h.conn.Write(context.Background(), m); err != nil {
		h.t.Error(err)
	}
}

// raw runs one request of the host's own against the server.
func (h *fakeHost) raw(method, id, params string) json.RawMessage {
	rid, _ := jsonrpc.MakeID(id)
	ch := make(chan *jsonrpc.Response, 1)
	h.mu.Lock()
	h.waiting[rid.Raw()] = ch
	h.mu.Unlock()
	h.write(&jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)})
	resp := <-ch
	if resp.Error != nil {
		h.t.Fatalf("host's own %s: %v", method, resp.Error)
	}
	return resp.Result
}

// read routes the server's messages: responses to their waiters,
// everything else to the transport's Deliver.
func (h *fakeHost) read() {
	for {
		m, err := h.conn.Read(context.Background())
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			h.mu.Lock()
			ch := h.waiting[m.ID.Raw()]
			delete(h.waiting, m.ID.Raw())
			h.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case *jsonrpc.Request:
			b, _ := jsonrpc.EncodeMessage(m)
			go func() {
				resp, err := h.tr.Deliver(context.Background(), b)
				if err != nil || resp == nil {
					return
				}
				if r, err := jsonrpc.DecodeMessage(resp); err == nil {
					h.write(r)
				}
			}()
		}
	}
}

// send is the transport's HostSend.
func (h *fakeHost) send(ctx context.Context, msg json.RawMessage) (json.RawMessage, error) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req := m.(*jsonrpc.Request)
	h.mu.Lock()
	h.methods = append(h.methods, req.Method)
	if ch := h.seen[req.Method]; ch != nil {
		close(ch)
		delete(h.seen, req.Method)
	}
	fail := h.fail
	var ch chan *jsonrpc.Response
	if req.ID.IsValid() {
		ch = make(chan *jsonrpc.Response, 1)
		h.waiting[req.ID.Raw()] = ch
	}
	h.mu.Unlock()
	if fail != nil {
		if err := fail(req.Method); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	block := h.block
	h.mu.Unlock()
	if block != nil {
		block(ctx, req.Method)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	h.write(req)
	if ch == nil {
		// The TS SDK's answer to a notification.
		return json.RawMessage(`{"jsonrpc":"2.0","result":{},"id":0}`), nil
	}
	select {
	case resp := <-ch:
		return jsonrpc.EncodeMessage(resp)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *fakeHost) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.methods)
}

// await returns a channel closed when the transport first sends method.
func (h *fakeHost) await(method string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan struct{})
	h.seen[method] = ch
	return ch
}

// TestHostTransport: an in-process server of the host is reached through
// the connector, with the full handshake or with the manifest's answers.
func TestHostTransport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest bool
		want     []string
	}{
		{"handshake", false, []string{"initialize", "notifications/initialized", "logging/setLevel", "tools/list", "tools/call"}},
		// The go-sdk server offers logging, so the level is set; the
		// handshake and the listing come from the manifest.
		{"manifest", true, []string{"logging/setLevel", "tools/call"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost(t, tc.manifest)
			cl := connect(t, map[string]tool.MCPServerConfig{"calc": mcp.HostServer(h.tr)}, 10*time.Second)
			if st := statusOf(cl, "calc"); st.Status != tool.MCPConnected || st.ServerName != "calc" || st.ServerVersion != "1.2.3" {
				t.Fatalf("status = %+v, want connected to calc 1.2.3", st)
			}
			res, err := run(t, context.Background(), find(t, cl, "mcp__calc__add"), map[string]any{"a": 2, "b": 3})
			if err != nil || res.IsError || res.Text() != "sum=5" {
				t.Fatalf("add = %+v, %v; want sum=5", res, err)
			}
			if diff := cmp.Diff(tc.want, h.sent()); diff != "" {
				t.Errorf("messages sent to the host (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostTransportHostError: a host that fails to answer makes the call
// an error result naming the failure, not a hang.
func TestHostTransportHostError(t *testing.T) {
	h := newFakeHost(t, true)
	cl := connect(t, map[string]tool.MCPServerConfig{"calc": mcp.HostServer(h.tr)}, 10*time.Second)
	h.mu.Lock()
	h.fail = func(method string) error {
		if method == "tools/call" {
			return errors.New("host answered mcp_message with an error: server gone")
		}
		return nil
	}
	h.mu.Unlock()
	done := make(chan struct{})
	var res tool.Result
	var err error
	go func() {
		defer close(done)
		res, err = run(t, context.Background(), find(t, cl, "mcp__calc__add"), map[string]any{"a": 1, "b": 1})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call whose host send failed did not return")
	}
	if err == nil && !res.IsError {
		t.Fatalf("add = %+v; want an error", res)
	}
	text := res.Text()
	if err != nil {
		text = err.Error()
	}
	if !strings.Contains(text, "server gone") {
		t.Errorf("error %q does not name the host's failure", text)
	}
}

// TestHostTransportListChanged: a list_changed notification the host's
// server starts reaches the client through Deliver; the client lists the
// tools again over the host (the manifest's list is stale) and sees the
// new tool.
func TestHostTransportListChanged(t *testing.T) {
	h := newFakeHost(t, true)
	cl := connect(t, map[string]tool.MCPServerConfig{"calc": mcp.HostServer(h.tr)}, 10*time.Second)
	listed := h.await("tools/list")
	got := make(chan []string, 4)
	cl.(tool.MCPToolWatcher).WatchTools(func(_ string, tools []tool.Tool) {
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Info().Name)
		}
		got <- names
	})
	sdk.AddTool(h.srv, &sdk.Tool{Name: "mul", Description: "Multiply"},
		func(_ context.Context, _ *sdk.CallToolRequest, in addArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("product=%g", in.A*in.B)}}}, nil, nil
		})
	select {
	case <-listed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no tools/list after list_changed; sent %v", h.sent())
	}
	select {
	case names := <-got:
		if !slices.Contains(names, "mcp__calc__mul") {
			t.Errorf("tools after list_changed = %v, want mcp__calc__mul among them", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the new tool list was not announced")
	}
}

// TestHostTransportDeliverUnconnected: Deliver before any connection is
// an error, and a malformed message is refused.
func TestHostTransportDeliverUnconnected(t *testing.T) {
	tr := &mcp.HostTransport{Send: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
	if _, err := tr.Deliver(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); !errors.Is(err, mcp.ErrNotConnected) {
		t.Errorf("Deliver unconnected = %v, want ErrNotConnected", err)
	}
	if _, err := tr.Deliver(context.Background(), json.RawMessage(`[1,2]`)); err == nil {
		t.Error("Deliver of a non-message succeeded")
	}
}

// TestHostTransportServerRequest: a request the host's server makes of
// the client (here a ping) reaches the client through Deliver, and the
// client's answer goes back to the server.
func TestHostTransportServerRequest(t *testing.T) {
	h := newFakeHost(t, false)
	connect(t, map[string]tool.MCPServerConfig{"calc": mcp.HostServer(h.tr)}, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.ss.Ping(ctx, nil); err != nil {
		t.Fatalf("the server's ping to the client: %v", err)
	}
}

// TestHostTransportCancel: a call cancelled by the client (which sends
// notifications/cancelled) also cancels the context of the host send in
// flight, so the driver can withdraw its control request.
func TestHostTransportCancel(t *testing.T) {
	h := newFakeHost(t, true)
	cl := connect(t, map[string]tool.MCPServerConfig{"calc": mcp.HostServer(h.tr)}, 10*time.Second)
	started := make(chan struct{})
	ended := make(chan struct{})
	h.mu.Lock()
	h.block = func(ctx context.Context, method string) {
		if method != "tools/call" {
			return
		}
		close(started)
		select {
		case <-ctx.Done():
			close(ended)
		case <-time.After(10 * time.Second):
		}
	}
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, _ = run(t, ctx, find(t, cl, "mcp__calc__add"), map[string]any{"a": 1, "b": 2})
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the host send of a cancelled call was not cancelled")
	}
}
