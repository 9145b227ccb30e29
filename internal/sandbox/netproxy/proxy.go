// Package netproxy is the filtering HTTP proxy of the Bash sandbox. The
// sandbox lets a confined command open TCP connections to this proxy only
// (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it); the proxy admits a
// request when Config.Allow approves its host and refuses the rest with
// 403, before anything reaches the network.
//
// It speaks HTTP/1.1 proxy requests: CONNECT host:port, which opens a
// byte tunnel (HTTPS, or any TCP protocol a client tunnels), and requests
// with an absolute http:// URI, which it forwards one per connection with
// hop-by-hop headers removed. SOCKS is not spoken.
//
// Hosts are compared in canonical form (package netaddr): Allow sees
// "127.0.0.1" however the client spelt it, and the proxy dials the
// canonical form it judged, so the spelling that was checked is the
// address that is reached.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of the optional Config fields.
const (
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxHeaderBytes = 32 << 10
	DefaultDialTimeout    = 30 * time.Second
)

// Config configures a Proxy. Allow is required; the rest have defaults.
type Config struct {
	// Allow reports whether a request to host:port may go through. host is
	// canonical (lower case, no trailing dot, IDN in punycode, IP literals
	// in canonical form without brackets). It is called concurrently.
	Allow func(host string, port int) bool

	// Dial connects upstream to addr, which is net.JoinHostPort of the
	// canonical host and the port; nil means a net.Dialer with
	// DefaultDialTimeout that also refuses to reach a loopback or
	// unspecified address unless the host itself is a loopback one (so an
	// allowed name that resolves to 127.0.0.1 does not open the way to
	// local services).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// HeaderTimeout bounds the time from a connection's start to the end
	// of its request header (a slow client is cut off, however steadily it
	// trickles bytes). Zero means DefaultHeaderTimeout.
	HeaderTimeout time.Duration

	// IdleTimeout bounds each read and write on the client side of a
	// forwarded plain-HTTP request, and the wait for the upstream's
	// response header. Tunnels have no idle limit: they last until either
	// side closes or the proxy is closed. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration

	// MaxHeaderBytes bounds a request's header; a larger one is refused
	// with 431. Zero means DefaultMaxHeaderBytes.
	MaxHeaderBytes int

	// Blocked, when set, is told about each refused request. It is called
	// concurrently and must not block.
	Blocked func(host string, port int)
}

// Proxy is a running filtering proxy. Its methods are safe for concurrent
// use.
type Proxy struct {
	cfg       Config
	ln        net.Listener
	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	transport *http.Transport

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // client and upstream connections, closed by Close

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New starts a proxy listening on 127.0.0.1 at a port of the kernel's
// choosing. It serves until Close.
func New(cfg Config) (*Proxy, error) {
	if cfg.Allow == nil {
		return nil, errors.New("netproxy: Config.Allow is nil")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen on loopback: %w", err)
	}
	return start(cfg, ln)
}

// start serves cfg on ln; tests hand it in-memory listeners.
func start(cfg Config, ln net.Listener) (*Proxy, error) {
	if cfg.Allow == nil {
		ln.Close()
		return nil, errors.New("netproxy: Config.Allow is nil")
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.Dial == nil {
		cfg.Dial = defaultDial
	}
	p := &Proxy{cfg: cfg, ln: ln, conns: map[net.Conn]struct{}{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.transport = &http.Transport{
		Proxy:                  nil, // never chain to the environment's proxy
		DialContext:            p.dialTracked,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 1 << 20,
		ResponseHeaderTimeout:  cfg.IdleTimeout,
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the address the proxy listens on.
func (p *Proxy) Addr() *net.TCPAddr {
	a, _ := p.ln.Addr().(*net.TCPAddr)
	return a
}

// Close stops accepting, closes every open connection and tunnel, and
// waits until all of the proxy's goroutines have ended. It is safe to call
// more than once.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		conns := make([]net.Conn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		if err := p.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			p.closeErr = fmt.Errorf("netproxy: close listener: %w", err)
		}
		p.cancel()
		for _, c := range conns {
			c.Close()
		}
	})
	p.wg.Wait()
	p.transport.CloseIdleConnections()
	return p.closeErr
}

// track registers c to be closed by Close; it reports false (and closes
// c) when the proxy is already closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || p.ctx.Err() != nil {
				return
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does, rather than spin.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-p.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.serve(c)
		}()
	}
}

// dialTracked dials upstream within DefaultDialTimeout and the proxy's
// life, and registers the connection so that Close ends it.
func (p *Proxy) dialTracked(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, stop := context.WithTimeout(ctx, DefaultDialTimeout)
	defer stop()
	defer context.AfterFunc(p.ctx, stop)()
	c, err := p.cfg.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if !p.track(c) {
		return nil, net.ErrClosed
	}
	return &trackedConn{Conn: c, p: p}, nil
}

// trackedConn forgets itself on Close.
type trackedConn struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.p.mu.Lock()
		delete(c.p.conns, c.Conn)
		c.p.mu.Unlock()
	})
	return err
}

// CloseWrite half-closes the connection when the underlying one can.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
