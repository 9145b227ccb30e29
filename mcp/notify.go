package mcp

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server says outside tool results reaches the session through
// Clients.ReportTo (tool.MCPReporter): its log messages of level warning
// and above (the client asks for that level: with logging/setLevel when
// the server declares the logging capability, and with metaLogLevel on each
// call for servers of the newer protocol), results that are large or cut (limits.go), and the
// outcome of background reconnections (retry.go). Events that happen
// before ReportTo are kept (up to maxEarlyReports) and given to it.

// logLevel is the lowest level of log message a server is asked to send.
const logLevel sdk.LoggingLevel = "warning"

// metaLogLevel is the request _meta key that carries the log level in
// protocol versions from 2026-07-28 on.
const metaLogLevel = "io.modelcontextprotocol/logLevel"

// maxEarlyReports bounds the events kept before ReportTo.
const maxEarlyReports = 64

// reporter passes events to the session's function.
type reporter struct {
	mu    sync.Mutex
	f     func(server, text string)
	early [][2]string // events before f was set
}

var _ tool.MCPReporter = (*Clients)(nil)

// ReportTo implements [tool.MCPReporter].
func (cl *Clients) ReportTo(f func(server, text string)) {
	cl.rep.mu.Lock()
	defer cl.rep.mu.Unlock()
	cl.rep.f = f
	for _, e := range cl.rep.early {
		f(e[0], e[1])
	}
	cl.rep.early = nil
}

// report passes one event of the server on.
func (s *server) report(text string) {
	if s.cl == nil {
		return
	}
	r := &s.cl.rep
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		if len(r.early) < maxEarlyReports {
			r.early = append(r.early, [2]string{s.name, text})
		}
		return
	}
	r.f(s.name, text)
}

// logged reports a notifications/message of the server.
func (s *server) logged(p *sdk.LoggingMessageParams) {
	if p == nil {
		return
	}
	data, ok := p.Data.(string)
	if !ok {
		b, err := json.Marshal(p.Data)
		if err != nil {
			b = []byte(fmt.Sprint(p.Data))
		}
		data = string(b)
	}
	from := ""
	if p.Logger != "" {
		from = " (" + p.Logger + ")"
	}
	s.report(fmt.Sprintf("log %s%s: %s", p.Level, from, data))
}
