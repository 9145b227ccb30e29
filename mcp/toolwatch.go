package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's offered tools change when it connects with a different
// listing (a late start, a reconnect), when it announces
// notifications/tools/list_changed, and when it is disabled (none) or
// enabled again. Each change is announced once to the function given to
// Clients.WatchTools, in order, with the server's whole new tool set.

// toolWatch is a server's announcement state.
type toolWatch struct {
	mu   sync.Mutex // serialises announcements
	f    func(server string, tools []tool.Tool)
	last string // key of the tool set last announced (or offered at start)
}

// relistTimeout bounds the listing that follows tools/list_changed when
// the server has no start timeout.
const relistTimeout = 30 * time.Second

var _ tool.MCPToolWatcher = (*Clients)(nil)

// WatchTools implements [tool.MCPToolWatcher]. Changes made between
// ConnectMCP and WatchTools are announced to f before it returns.
func (cl *Clients) WatchTools(f func(server string, tools []tool.Tool)) {
	for _, name := range cl.order {
		s := cl.servers[name]
		s.watch.mu.Lock()
		s.watch.f = f
		s.watch.mu.Unlock()
		s.announce()
	}
}

// settle records the tool set offered now as already announced: the
// session starts with it (ConnectMCP).
func (s *server) settle() {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	_, s.watch.last = s.offered()
}

// announce tells the watcher the server's tools when they are not the ones
// it was last told. Before a watcher is set nothing is recorded, so that
// WatchTools catches up.
func (s *server) announce() {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	s.announceLocked()
}

// announceLocked is announce with s.watch.mu held.
func (s *server) announceLocked() {
	if s.watch.f == nil {
		return
	}
	tools, key := s.offered()
	if key == s.watch.last {
		return
	}
	s.watch.last = key
	s.watch.f(s.name, tools)
}

// offered returns the tools the server offers now (none while disabled or
// never listed) and a key that differs whenever they do.
func (s *server) offered() ([]tool.Tool, string) {
	s.mu.Lock()
	disabled, listed := s.disabled, s.listed
	s.mu.Unlock()
	if disabled || listed == nil {
		return nil, ""
	}
	data, err := json.Marshal(listed)
	if err != nil {
		data = nil
	}
	return s.adapters(), "tools:" + string(data)
}

// relist lists the server's tools again after tools/list_changed and
// announces them when they differ. A failed listing keeps the old tools:
// the next connection lists them again.
func (s *server) relist() {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return
	}
	timeout := s.startTimeout
	if timeout <= 0 {
		timeout = relistTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var tools []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for {
		res, err := sess.ListTools(ctx, params)
		if err != nil {
			return
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	// Status (which takes s.watch.mu too) shows the new tools only once
	// the watcher has them.
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	s.mu.Lock()
	current := s.sess == sess && !sameTools(s.listed, tools)
	if current {
		s.listed, s.adapted = tools, nil
	}
	s.mu.Unlock()
	if current {
		s.announceLocked()
	}
}

// sameTools reports whether two listings are the same tools.
func sameTools(a, b []*sdk.Tool) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && len(a) == len(b) && bytes.Equal(ja, jb)
}
