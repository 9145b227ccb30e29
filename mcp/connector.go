package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tool"
)

// ClientName is how agentloop introduces itself to MCP servers.
const ClientName = "agentloop"

// Connector starts MCP servers on the official Go SDK. Its zero value is
// ready to use. It implements [tool.MCPConnector].
type Connector struct {
	// Version is the client version sent to servers; empty means "dev".
	Version string
	// KillGrace is how long a stdio server may take to exit after its
	// stdin is closed before its process group is killed; zero means 2s.
	KillGrace time.Duration
	// RetryAttempts is how many times a server that failed (at start, or
	// when its connection died) is reconnected in the background before
	// the round gives up; the session starts a new round before each
	// query (Clients.RetryFailed). Zero means 3; negative means never.
	RetryAttempts int
	// RetryBackoff is the wait before the first attempt of a round; it
	// doubles after each attempt, up to 30s. Zero means 2s.
	RetryBackoff time.Duration
}

var _ tool.MCPConnector = Connector{}

// ConnectMCP implements [tool.MCPConnector]: it starts every server
// concurrently and waits for each to connect, fail, or run out of
// startTimeout.
func (c Connector) ConnectMCP(ctx context.Context, servers map[string]tool.MCPServerConfig, env *tool.Env, startTimeout time.Duration) (tool.MCPClients, error) {
	cl := &Clients{servers: map[string]*server{}}
	cl.life, cl.end = context.WithCancel(context.WithoutCancel(ctx))
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cl.servers[name] = &server{name: name, cfg: servers[name], env: env, conn: c, startTimeout: startTimeout, cl: cl}
		cl.order = append(cl.order, name)
	}
	var wg sync.WaitGroup
	for _, name := range names {
		s := cl.servers[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.connect(ctx)
		}()
	}
	wg.Wait()
	for _, name := range names {
		cl.servers[name].settle()
		cl.tools = append(cl.tools, cl.servers[name].adapters()...)
	}
	if len(names) > 0 {
		cl.tools = append(cl.tools, &listResources{cl: cl}, &readResource{cl: cl})
	}
	for _, name := range names {
		cl.servers[name].retry(false)
	}
	return cl, nil
}

// Clients are the connections of one session, made by
// [Connector.ConnectMCP]. It implements [tool.MCPClients].
type Clients struct {
	servers map[string]*server
	order   []string
	tools   []tool.Tool

	life context.Context    // ends when the clients close: stops retries
	end  context.CancelFunc // ends life
	rep  reporter           // where servers' events go (notify.go)
}

// ErrUnknownServer is returned for a server name that is not configured.
var ErrUnknownServer = errors.New("mcp: no such server")

// Tools implements [tool.MCPClients].
func (cl *Clients) Tools() []tool.Tool { return slices.Clone(cl.tools) }

// Status implements [tool.MCPClients].
func (cl *Clients) Status() []tool.MCPServerStatus {
	out := make([]tool.MCPServerStatus, 0, len(cl.order))
	for _, name := range cl.order {
		out = append(out, cl.servers[name].status())
	}
	return out
}

// Reconnect implements [tool.MCPClients].
func (cl *Clients) Reconnect(ctx context.Context, name string) error {
	s, ok := cl.servers[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	s.disconnect()
	return s.connect(ctx)
}

// Toggle implements [tool.MCPClients].
func (cl *Clients) Toggle(ctx context.Context, name string, enabled bool) error {
	s, ok := cl.servers[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	return s.setEnabled(ctx, enabled)
}

// Close implements [tool.MCPClients]: it disconnects every server
// concurrently.
func (cl *Clients) Close() error {
	cl.end()
	var wg sync.WaitGroup
	for _, s := range cl.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
			s.disconnect()
		}()
	}
	wg.Wait()
	return nil
}
