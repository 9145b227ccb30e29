package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured MCP server and its current connection.
type server struct {
	name         string
	cfg          tool.MCPServerConfig
	env          *tool.Env
	conn         Connector
	startTimeout time.Duration
	cl           *Clients // the session's clients: their lifetime and reporter

	dialMu   sync.Mutex // serialises connect: one dial at a time
	mu       sync.Mutex
	sess     *sdk.ClientSession // nil while not connected
	proc     *process           // the stdio server's process, if any
	dead     chan struct{}      // closed when sess's connection ends
	state    string             // tool.MCPConnected, MCPFailed, MCPPending, MCPDisabled
	err      string             // why the server failed
	disabled bool
	closed   bool // the session is over: never connect again
	info     *sdk.Implementation
	listed   []*sdk.Tool // the tools of the last successful listing
	adapted  []tool.Tool // built from listed (adapters); nil after a new listing
	hasRes   bool        // the server declared the resources capability
	protocol string      // the protocol version agreed at the last connection
	retrying bool        // a round of background reconnections runs (retry.go)

	watch toolWatch // tells the session when the offered tools change (toolwatch.go)
}

// errNotConnected reports a call to a server that is down.
var errNotConnected = errors.New("not connected")

// connect opens a connection to the server and lists its tools, bounded
// by the start timeout. It records the outcome in the server's status.
func (s *server) connect(ctx context.Context) error {
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return fmt.Errorf("mcp server %q: the session is closed", s.name)
	case s.disabled:
		s.mu.Unlock()
		return fmt.Errorf("mcp server %q: disabled", s.name)
	case s.sess != nil:
		s.mu.Unlock()
		return nil
	}
	s.state = tool.MCPPending
	s.mu.Unlock()

	cctx, cancel := ctx, context.CancelFunc(func() {})
	if s.startTimeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, s.startTimeout)
	}
	defer cancel()
	sess, proc, tools, err := s.dial(cctx)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("did not start within %v", s.startTimeout)
	}
	if err := s.adopt(sess, proc, tools, err); err != nil {
		return err
	}
	s.announce()
	return nil
}

// adopt records the outcome of a dial as the server's connection and
// status.
func (s *server) adopt(sess *sdk.ClientSession, proc *process, tools []*sdk.Tool, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && (s.closed || s.disabled) {
		err = errors.New("closed while connecting")
	}
	if err != nil {
		if sess != nil {
			_ = sess.Close()
		}
		proc.kill()
		s.state, s.err = tool.MCPFailed, err.Error()
		if s.disabled { // disabled while connecting: it stays disabled
			s.state, s.err = tool.MCPDisabled, ""
		}
		return fmt.Errorf("mcp server %q: %w", s.name, err)
	}
	s.sess, s.proc, s.state, s.err = sess, proc, tool.MCPConnected, ""
	s.info = sess.InitializeResult().ServerInfo
	s.protocol = sess.InitializeResult().ProtocolVersion
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Resources != nil {
		s.hasRes = true
	}
	if s.listed == nil || !sameTools(s.listed, tools) {
		s.listed, s.adapted = tools, nil
	}
	dead := make(chan struct{})
	s.dead = dead
	go func() {
		_ = sess.Wait()
		close(dead)
		s.mu.Lock()
		lost := s.sess == sess && !s.closed
		if lost {
			s.sess = nil
			s.state, s.err = tool.MCPFailed, "the server closed the connection"
			go proc.kill()
		}
		s.mu.Unlock()
		if lost {
			s.retry(false)
		}
	}()
	return nil
}

// dial connects and lists the server's tools.
func (s *server) dial(ctx context.Context) (*sdk.ClientSession, *process, []*sdk.Tool, error) {
	tr, proc, err := s.transport()
	if err != nil {
		return nil, nil, nil, err
	}
	// The connection outlives ctx, which bounds only the start: the SSE
	// transport's event stream, for one, is bound to the context it is
	// connected with. It ends when the process is killed.
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	proc = proc.alsoOnKill(endLife)
	tr = lifetimeTransport{Transport: tr, ctx: life}
	version := s.conn.Version
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: ClientName, Version: version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// The handler runs on the connection's reader: list elsewhere.
			go s.relist()
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			s.logged(req.Params)
		},
		// Progress notifications are not surfaced: a call's result is
		// all the loop reports of it. The SDK drops them without a
		// handler.
	})
	sess, err := client.Connect(ctx, tr, nil)
	if err != nil {
		proc.kill()
		return nil, nil, nil, err
	}
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
		// Ask for warnings and worse only (notify.go); a server that
		// cannot set its level still works.
		_ = sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: logLevel})
	}
	var tools []*sdk.Tool
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Tools != nil {
		params := &sdk.ListToolsParams{}
		for {
			res, err := sess.ListTools(ctx, params)
			if err != nil {
				_ = sess.Close()
				proc.kill()
				return nil, nil, nil, fmt.Errorf("listing tools: %w", err)
			}
			tools = append(tools, res.Tools...)
			if res.NextCursor == "" {
				break
			}
			params.Cursor = res.NextCursor
		}
	}
	return sess, proc, tools, nil
}

// disconnect closes the connection, if any, and stops the process.
func (s *server) disconnect() {
	s.mu.Lock()
	sess, proc := s.sess, s.proc
	s.sess, s.proc = nil, nil
	if !s.disabled && s.state == tool.MCPConnected {
		s.state = tool.MCPPending
	}
	s.mu.Unlock()
	if sess != nil {
		done := make(chan struct{})
		go func() { _ = sess.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(s.conn.grace()):
		}
	}
	proc.kill()
}

// setEnabled disables (disconnects) or enables (connects) the server.
func (s *server) setEnabled(ctx context.Context, enabled bool) error {
	s.mu.Lock()
	s.disabled = !enabled
	s.mu.Unlock()
	if !enabled {
		s.disconnect()
		s.mu.Lock()
		s.state, s.err = tool.MCPDisabled, ""
		s.mu.Unlock()
		s.announce()
		return nil
	}
	return s.connect(ctx)
}

// session returns the live connection, reconnecting once when the server
// is down (not when it is disabled).
func (s *server) session(ctx context.Context) (*sdk.ClientSession, chan struct{}, error) {
	s.mu.Lock()
	sess, dead, disabled := s.sess, s.dead, s.disabled
	s.mu.Unlock()
	if disabled {
		return nil, nil, fmt.Errorf("MCP server %q is disabled", s.name)
	}
	if sess != nil {
		return sess, dead, nil
	}
	if err := s.connect(ctx); err != nil {
		return nil, nil, fmt.Errorf("MCP server %q is %w: %w", s.name, errNotConnected, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil, nil, fmt.Errorf("MCP server %q is %w", s.name, errNotConnected)
	}
	return s.sess, s.dead, nil
}

// call runs one tool call. Failures of the server become is_error results;
// only the cancellation of ctx is returned as an error.
func (s *server) call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	sess, dead, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Error(err.Error()), nil
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if s.cfg.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, s.cfg.Timeout)
	}
	defer cancel()
	// metaLogLevel asks servers of the newer protocol, where the log level
	// travels with each request, for the level that older ones are set to
	// at connection (notify.go).
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: sdk.Meta{metaLogLevel: string(logLevel)}})
	if err == nil {
		return s.capped(name, convertResult(res)), nil
	}
	if ctx.Err() != nil {
		return tool.Result{}, ctx.Err()
	}
	if cctx.Err() != nil {
		return tool.Error(fmt.Sprintf("MCP server %q did not answer the call of %s within %v", s.name, name, s.cfg.Timeout)), nil
	}
	if s.connectionLost(err, dead) {
		s.mu.Lock()
		if s.sess == sess {
			s.sess = nil
			s.state, s.err = tool.MCPFailed, err.Error()
			go s.proc.kill()
			go s.retry(false)
		}
		s.mu.Unlock()
		return tool.Error(fmt.Sprintf("MCP server %q failed during the call of %s: %v", s.name, name, err)), nil
	}
	return tool.Error(fmt.Sprintf("MCP server %q: %s: %v", s.name, name, err)), nil
}

// connectionLost tells a dead connection from an error the server sent.
func (s *server) connectionLost(err error, dead chan struct{}) bool {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != -32003 && we.Code != -32004 {
		return false
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || we != nil {
		return true
	}
	select {
	case <-dead:
		return true
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

// status reports the server's state.
func (s *server) status() tool.MCPServerStatus {
	s.watch.mu.Lock() // see relist
	defer s.watch.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := tool.MCPServerStatus{Name: s.name, Status: s.state, Source: s.cfg.Source, Error: s.err}
	if s.info != nil {
		st.ServerName, st.ServerVersion = s.info.Name, s.info.Version
	}
	st.ProtocolVersion = s.protocol
	for _, t := range s.listed {
		st.Tools = append(st.Tools, FullName(s.name, t.Name))
	}
	return st
}

func (c Connector) grace() time.Duration {
	if c.KillGrace > 0 {
		return c.KillGrace
	}
	return 2 * time.Second
}
