package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"sync"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/mcp"
	sdk "github.com/coder/acp-go-sdk"
)

// Config configures [Serve].
type Config struct {
	// Options are the base options of every session; Serve sets Cwd,
	// AdditionalDirectories, CanUseTool, IncludePartialMessages, Resume
	// and SessionID per session, adds the editor's MCP servers to
	// MCPServers, and sets in ToolHost what the editor offers (its
	// fs/read_text_file, fs/write_text_file and terminal), keeping the
	// base ToolHost's functions for the rest. nil means defaults.
	Options *agentloop.Options
	// Logger receives diagnostics; nil means none.
	Logger *slog.Logger
}

// peer is what the agent asks of the editor: the agent side of the
// connection.
type peer interface {
	SessionUpdate(ctx context.Context, n sdk.SessionNotification) error
	RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, r sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, r sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, r sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, r sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error)
	ReleaseTerminal(ctx context.Context, r sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error)
}

// Serve answers ACP requests read from in, writing to out, until in ends
// or ctx is done; then it closes every session (a running prompt is
// cancelled and requests still in progress get no answer: an editor keeps
// the stream open while it waits). It returns nil when the editor closed
// the connection and ctx's cause otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	a := newAgent(cfg)
	a.out = &watchWriter{w: out}
	// The connection starts reading at once, and what it reads may log or
	// reach the agent; the gate holds its first read until the logger and
	// the peer are in place (the SDK's SetLogger is not synchronised).
	gate := &gatedReader{r: in, open: make(chan struct{})}
	conn := sdk.NewAgentSideConnection(a, a.out, gate)
	conn.SetLogger(a.log)
	a.peer = conn
	close(gate.open)
	var err error
	select {
	case <-conn.Done():
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	a.closeAll()
	return err
}

// agent implements the ACP agent side over agentloop clients.
type agent struct {
	base agentloop.Options
	log  *slog.Logger
	peer peer
	out  *watchWriter // the connection's output (commands.go)

	mu       sync.Mutex
	sessions map[string]*session
	caps     sdk.ClientCapabilities // what the editor offered in initialize
}

var (
	_ sdk.Agent       = (*agent)(nil)
	_ sdk.AgentLoader = (*agent)(nil)
)

func newAgent(cfg Config) *agent {
	a := &agent{log: cfg.Logger, sessions: map[string]*session{}}
	if cfg.Options != nil {
		a.base = *cfg.Options
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.base.MCPConnector == nil {
		a.base.MCPConnector = mcp.Connector{Version: agentloop.Version}
	}
	return a
}

// Initialize implements sdk.Agent.
func (a *agent) Initialize(_ context.Context, req sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = req.ClientCapabilities
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "agentloop", Version: agentloop.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate implements sdk.Agent: credentials come from the
// environment and settings, so there is nothing to do.
func (a *agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements sdk.Agent.
func (a *agent) NewSession(_ context.Context, req sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	s, err := a.open(req.Cwd, req.AdditionalDirectories, req.McpServers, "")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.out.after(func() { s.advertiseCommands(context.Background()) }, []byte(`"result"`), []byte(`"sessionId":"`+s.id+`"`))
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.id), Modes: s.modes(), Models: s.models(), ConfigOptions: s.configOptions()}, nil
}

// LoadSession implements sdk.AgentLoader: the transcript is replayed as
// session updates, then the session is resumed.
func (a *agent) LoadSession(ctx context.Context, req sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := a.replay(ctx, string(req.SessionId), req.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	s, err := a.open(req.Cwd, req.AdditionalDirectories, req.McpServers, string(req.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	s.advertiseCommands(ctx)
	return sdk.LoadSessionResponse{Modes: s.modes(), Models: s.models(), ConfigOptions: s.configOptions()}, nil
}

// ResumeSession implements sdk.Agent: like LoadSession without the
// replay.
func (a *agent) ResumeSession(ctx context.Context, req sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	s, err := a.open(req.Cwd, req.AdditionalDirectories, req.McpServers, string(req.SessionId))
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	s.advertiseCommands(ctx)
	return sdk.ResumeSessionResponse{Modes: s.modes(), Models: s.models(), ConfigOptions: s.configOptions()}, nil
}

// CloseSession implements sdk.Agent.
func (a *agent) CloseSession(_ context.Context, req sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[string(req.SessionId)]
	delete(a.sessions, string(req.SessionId))
	a.mu.Unlock()
	if s == nil {
		return sdk.CloseSessionResponse{}, unknownSession(req.SessionId)
	}
	if err := s.client.Close(); err != nil {
		a.log.Warn("closing a session", "session", s.id, "error", err)
	}
	return sdk.CloseSessionResponse{}, nil
}

// Cancel implements sdk.Agent. The connection has already cancelled the
// running prompt's context, which stops the query.
func (a *agent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

// Prompt implements sdk.Agent.
func (a *agent) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return s.prompt(ctx, req.Prompt)
}

// SetSessionMode implements sdk.Agent: the mode is a permission mode.
func (a *agent) SetSessionMode(_ context.Context, req sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	mode, err := agentloop.ParsePermissionMode(string(req.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := s.client.SetPermissionMode(mode); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.mu.Lock()
	s.mode = s.client.PermissionMode()
	s.mu.Unlock()
	return sdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel answers session/set_model.
func (a *agent) UnstableSetSessionModel(_ context.Context, req sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := s.client.SetModel(string(req.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// open starts the agentloop session of an ACP session: a new one when
// resume is empty, else the stored session resume names. A session of
// that id that this agent already holds is closed first.
func (a *agent) open(cwd string, dirs []string, servers []sdk.McpServer, resume string) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not an absolute path", cwd)})
	}
	o := a.base
	o.Cwd = cwd
	o.AdditionalDirectories = append(append([]string{}, a.base.AdditionalDirectories...), dirs...)
	o.IncludePartialMessages = true
	o.Resume = resume
	o.Continue = false
	o.SessionID = ""
	o.MCPServers = maps.Clone(a.base.MCPServers)
	if err := addMCPServers(&o, servers); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if resume != "" {
		a.mu.Lock()
		old := a.sessions[resume]
		delete(a.sessions, resume)
		a.mu.Unlock()
		if old != nil {
			_ = old.client.Close()
		}
	}
	s := &session{agent: a, cwd: cwd, tools: map[string]toolUse{}, terminals: map[string]string{}}
	o.CanUseTool = s.canUseTool
	a.mu.Lock()
	caps := a.caps
	a.mu.Unlock()
	o.ToolHost = s.toolHost(caps, a.base.ToolHost)
	c, err := agentloop.NewClient(&o)
	if err != nil {
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.client = c
	s.id = c.SessionID()
	s.mode = c.PermissionMode()
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	return s, nil
}

// session returns the open session id names, or an invalid-params error.
func (a *agent) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[string(id)]; s != nil {
		return s, nil
	}
	return nil, unknownSession(id)
}

func unknownSession(id sdk.SessionId) error {
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no open session %q", id)})
}

// closeAll closes every session.
func (a *agent) closeAll() {
	a.mu.Lock()
	all := a.sessions
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.client.Close())
	}
	if err := errors.Join(errs...); err != nil {
		a.log.Warn("closing sessions", "error", err)
	}
}

// gatedReader is a reader whose reads wait until open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}
