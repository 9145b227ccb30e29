package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agentloop/agentloop/tool"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostSend delivers one JSON-RPC message (a request or a notification,
// encoded) to an MCP server that lives in another process's memory, and
// returns that process's reply: for a request, the JSON-RPC response;
// for a notification, anything (it is ignored). It must return when ctx
// is done.
type HostSend func(ctx context.Context, msg json.RawMessage) (json.RawMessage, error)

// HostTransport is an MCP client transport to a server that runs inside
// the host process that spawned agentloop (the official SDKs'
// createSdkMcpServer): every message the client writes is handed to Send
// one at a time, and the reply Send returns is what the client reads.
// Put a *HostTransport in MCPServerConfig.Server (Type "sdk") to connect
// to such a server; see [HostServer].
//
// Requests are sent concurrently, each on its own goroutine; a request
// whose Send fails is answered with a JSON-RPC internal error naming the
// failure, so the call fails instead of hanging. Notifications are sent
// in order, without making the client wait for their (meaningless)
// reply; what the client writes after a notification goes to the host
// once the host has answered it. A notifications/cancelled
// for a pending request also cancels the context of that request's Send.
//
// When InitializeResult is set, the client's initialize request is
// answered with it without a round trip, and notifications/initialized is
// not sent (the host initialised its server itself); when ToolsListResult
// is also set, the first tools/list without a cursor is answered with it,
// until the host reports notifications/tools/list_changed. The SEP-2575
// server/discover probe is always answered locally with "method not
// found", so the client falls back to initialize at once.
//
// Messages the server starts (a notification, or a request to the client)
// reach the client through [HostTransport.Deliver].
//
// A HostTransport may be connected again after its connection closed (an
// MCP reconnect); Deliver goes to the newest connection.
type HostTransport struct {
	// Send carries messages to the host. It must be set.
	Send HostSend
	// InitializeResult and ToolsListResult are the host's captured
	// answers to initialize and tools/list (the SDK's manifest); nil
	// means ask the host.
	InitializeResult json.RawMessage
	ToolsListResult  json.RawMessage

	mu          sync.Mutex
	conn        *hostConn
	listChanged bool // the host reported tools/list_changed: ToolsListResult is stale
}

var _ sdk.Transport = (*HostTransport)(nil)

// HostServer returns the configuration of an in-process server of the
// host reached through t.
func HostServer(t *HostTransport) tool.MCPServerConfig {
	return tool.MCPServerConfig{Type: tool.MCPSDK, Server: t, Source: "sdk"}
}

// ErrNotConnected is returned by HostTransport.Deliver while no client is
// connected.
var ErrNotConnected = errors.New("mcp: the host transport has no open connection")

// Connect implements [sdk.Transport].
func (t *HostTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	if t.Send == nil {
		return nil, errors.New("mcp: host transport: Send is nil")
	}
	c := &hostConn{
		t:       t,
		inbox:   make(chan jsonrpc.Message, 16),
		queue:   make(chan queued, 64),
		done:    make(chan struct{}),
		pending: map[any]context.CancelFunc{},
		inbound: map[any]chan *jsonrpc.Response{},
	}
	c.life, c.end = context.WithCancel(context.WithoutCancel(ctx))
	go c.sender()
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, nil
}

// Deliver hands a message the host's server started to the client. For a
// request it waits for the client's response and returns it, encoded;
// for a notification it returns (nil, nil) once the client has it.
func (t *HostTransport) Deliver(ctx context.Context, msg json.RawMessage) (json.RawMessage, error) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("mcp: host message: %w", err)
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return nil, errors.New("mcp: host message: a response to no request of the host's")
	}
	t.mu.Lock()
	c := t.conn
	if req.Method == "notifications/tools/list_changed" {
		t.listChanged = true
	}
	t.mu.Unlock()
	if c == nil {
		return nil, ErrNotConnected
	}
	var wait chan *jsonrpc.Response
	if req.ID.IsValid() {
		wait = make(chan *jsonrpc.Response, 1)
		c.mu.Lock()
		if _, dup := c.inbound[req.ID.Raw()]; dup {
			c.mu.Unlock()
			return nil, fmt.Errorf("mcp: host message: request id %v is already pending", req.ID.Raw())
		}
		c.inbound[req.ID.Raw()] = wait
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.inbound, req.ID.Raw())
			c.mu.Unlock()
		}()
	}
	if err := c.push(ctx, req); err != nil {
		return nil, err
	}
	if wait == nil {
		return nil, nil
	}
	select {
	case resp := <-wait:
		b, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			return nil, fmt.Errorf("mcp: host message: encoding the client's answer: %w", err)
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, ErrNotConnected
	}
}

// manifest returns the captured answer to method, if one may be used now.
func (t *HostTransport) manifest(c *hostConn, method string, params json.RawMessage) json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch method {
	case "initialize":
		if t.InitializeResult != nil {
			c.localInit = true
			return t.InitializeResult
		}
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(params, &p)
		if t.ToolsListResult != nil && !t.listChanged && !c.listUsed && p.Cursor == "" {
			c.listUsed = true
			return t.ToolsListResult
		}
	}
	return nil
}

// hostConn is one connection of a HostTransport.
type hostConn struct {
	t     *HostTransport
	inbox chan jsonrpc.Message // what the client reads
	queue chan queued          // what goes to the host, in order (sender)

	life context.Context // ends at Close: the sends in flight are cancelled
	end  context.CancelFunc

	mu        sync.Mutex
	closed    bool
	done      chan struct{}
	pending   map[any]context.CancelFunc     // the client's requests in flight, by id
	inbound   map[any]chan *jsonrpc.Response // the host's requests awaiting the client's answer
	localInit bool                           // initialize was answered from the manifest
	listUsed  bool                           // tools/list was answered from the manifest
}

// push queues m for the client to read.
func (c *hostConn) push(ctx context.Context, m jsonrpc.Message) error {
	select {
	case c.inbox <- m:
		return nil
	case <-c.done:
		return ErrNotConnected
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Read implements [sdk.Connection].
func (c *hostConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.inbox:
		return m, nil
	case <-c.done:
		return nil, sdk.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements [sdk.Connection]. It does not wait for the host.
func (c *hostConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return sdk.ErrConnectionClosed
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		// The client's answer to a request the host's server made.
		c.mu.Lock()
		wait, ok := c.inbound[m.ID.Raw()]
		c.mu.Unlock()
		if !ok {
			// Deliver gave up waiting (its context ended): the late
			// answer is dropped. An error here would close the
			// connection.
			return nil
		}
		select {
		case wait <- m:
		default:
		}
		return nil
	case *jsonrpc.Request:
		return c.writeRequest(m)
	}
	return fmt.Errorf("mcp: host transport: cannot write a %T", m)
}

func (c *hostConn) writeRequest(req *jsonrpc.Request) error {
	if !req.ID.IsValid() {
		switch req.Method {
		case "notifications/initialized":
			c.mu.Lock()
			local := c.localInit
			c.mu.Unlock()
			if local {
				return nil
			}
		case "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.mu.Lock()
					cancel := c.pending[id.Raw()]
					c.mu.Unlock()
					if cancel != nil {
						defer cancel()
					}
				}
			}
		}
		b, err := jsonrpc.EncodeMessage(req)
		if err != nil {
			return fmt.Errorf("mcp: host transport: encoding %s: %w", req.Method, err)
		}
		return c.goSend(true, func() { _, _ = c.t.Send(c.life, b) })
	}
	if req.Method == "server/discover" {
		return c.push(c.life, &jsonrpc.Response{ID: req.ID,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "server/discover is not offered over the host transport"}})
	}
	if res := c.t.manifest(c, req.Method, req.Params); res != nil {
		return c.push(c.life, &jsonrpc.Response{ID: req.ID, Result: res})
	}
	b, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return fmt.Errorf("mcp: host transport: encoding %s: %w", req.Method, err)
	}
	ctx, cancel := context.WithCancel(c.life)
	c.mu.Lock()
	c.pending[req.ID.Raw()] = cancel
	c.mu.Unlock()
	return c.goSend(false, func() {
		defer func() {
			cancel()
			c.mu.Lock()
			delete(c.pending, req.ID.Raw())
			c.mu.Unlock()
		}()
		_ = c.push(c.life, c.answer(ctx, req, b))
	})
}

// answer sends req to the host and returns the response the client gets.
func (c *hostConn) answer(ctx context.Context, req *jsonrpc.Request, b []byte) *jsonrpc.Response {
	fail := func(format string, args ...any) *jsonrpc.Response {
		return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("%s through the host: ", req.Method) + fmt.Sprintf(format, args...)}}
	}
	raw, err := c.t.Send(ctx, b)
	if err != nil {
		return fail("%v", err)
	}
	m, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return fail("the host's answer is not a JSON-RPC message: %v", err)
	}
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return fail("the host answered with a request, not a response")
	}
	if resp.ID.Raw() != req.ID.Raw() {
		return fail("the host's answer is for id %v, not %v", resp.ID.Raw(), req.ID.Raw())
	}
	return resp
}

// goSend queues f on the connection's sender, which runs the queued
// functions in order: a notification's send is waited for, so that what
// the client wrote after it reaches the host after it; a request's send
// runs on a goroutine of its own. Close does not wait for them (their
// context is cancelled).
func (c *hostConn) goSend(notification bool, f func()) error {
	select {
	case c.queue <- queued{f, notification}:
		return nil
	case <-c.done:
		return sdk.ErrConnectionClosed
	}
}

type queued struct {
	f    func()
	wait bool
}

// sender runs the queue until the connection closes.
func (c *hostConn) sender() {
	for {
		select {
		case q := <-c.queue:
			if q.wait {
				q.f()
			} else {
				go q.f()
			}
		case <-c.done:
			return
		}
	}
}

// Close implements [sdk.Connection]: the sends in flight are cancelled.
func (c *hostConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()
	c.end()
	c.t.mu.Lock()
	if c.t.conn == c {
		c.t.conn = nil
	}
	c.t.mu.Unlock()
	return nil
}

// SessionID implements [sdk.Connection]; the host transport has none.
func (c *hostConn) SessionID() string { return "" }
