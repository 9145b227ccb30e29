package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"sync"

	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds the SDK transport of the server's configuration.
func (s *server) transport() (sdk.Transport, *process, error) {
	cfg := s.cfg
	typ := cfg.Type
	if typ == "" {
		typ = tool.MCPStdio
		if cfg.Server != nil {
			typ = tool.MCPSDK
		}
	}
	switch typ {
	case tool.MCPStdio:
		if cfg.Command == "" {
			return nil, nil, fmt.Errorf("stdio server: no command")
		}
		cmd := exec.Command(cfg.Command, cfg.Args...)
		if s.env != nil {
			cmd.Dir = s.env.Cwd
			cmd.Env = s.env.Environ
		}
		if len(cfg.Env) > 0 {
			if cmd.Env == nil {
				cmd.Env = cmd.Environ()
			}
			keys := make([]string, 0, len(cfg.Env))
			for k := range cfg.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
			}
		}
		ownGroup(cmd)
		p := &process{cmd: cmd}
		return guardedCommand{&sdk.CommandTransport{Command: cmd, TerminateDuration: s.conn.grace()}}, p, nil
	case tool.MCPHTTP, tool.MCPSSE:
		if cfg.URL == "" {
			return nil, nil, fmt.Errorf("%s server: no url", typ)
		}
		hc := &http.Client{}
		if len(cfg.Headers) > 0 {
			hc.Transport = headerTransport{headers: cfg.Headers, base: http.DefaultTransport}
		}
		if typ == tool.MCPSSE {
			return &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc}, nil, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: -1}, nil, nil
	case tool.MCPSDK:
		if ht, ok := cfg.Server.(*HostTransport); ok {
			// A server in the host process (hosttransport.go).
			return ht, nil, nil
		}
		srv, ok := cfg.Server.(*sdk.Server)
		if !ok {
			return nil, nil, fmt.Errorf("in-process server: Server is a %T, not a *mcp.Server of the MCP Go SDK or a *mcp.HostTransport", cfg.Server)
		}
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("in-process server: %w", err)
		}
		return ct, &process{closeFn: func() { _ = ss.Close() }}, nil
	default:
		return nil, nil, fmt.Errorf("unknown server type %q (want stdio, http, sse or sdk)", typ)
	}
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// process is what must be stopped when a connection ends: a stdio
// server's process group, or an in-process server's session.
type process struct {
	cmd     *exec.Cmd
	closeFn func()
	once    sync.Once
}

// kill stops the process group (or closes the in-process session). It is
// safe on a nil process and idempotent.
func (p *process) kill() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		if p.closeFn != nil {
			p.closeFn()
		}
		if p.cmd != nil && p.cmd.Process != nil {
			killGroup(p.cmd)
		}
	})
}

// alsoOnKill returns a process (p, or a new one when p is nil) whose kill
// also calls f.
func (p *process) alsoOnKill(f func()) *process {
	if p == nil {
		return &process{closeFn: f}
	}
	prev := p.closeFn
	p.closeFn = func() {
		if prev != nil {
			prev()
		}
		f()
	}
	return p
}

// lifetimeTransport connects its transport with the connection's own
// context instead of the caller's.
type lifetimeTransport struct {
	sdk.Transport
	ctx context.Context
}

func (t lifetimeTransport) Connect(context.Context) (sdk.Connection, error) {
	return t.Transport.Connect(t.ctx)
}

// guardedCommand starts a stdio server's process through procguard, so
// that the server cannot read agentloop's credentials out of agentloop's
// /proc entries or memory. The SDK's Connect only sets up the pipes and
// starts the process, so it runs on procguard's launching thread whole.
type guardedCommand struct{ *sdk.CommandTransport }

func (t guardedCommand) Connect(ctx context.Context) (sdk.Connection, error) {
	var conn sdk.Connection
	err := procguard.Run(func() error {
		var err error
		conn, err = t.CommandTransport.Connect(ctx)
		return err
	})
	return conn, err
}
