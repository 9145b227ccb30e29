package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/agentloop/agentloop/internal/netaddr"
)

// defaultDial connects with a net.Dialer. Unless the host asked for is a
// loopback host itself, it refuses to connect to a loopback or unspecified
// address, which a name can resolve to (DNS rebinding, /etc/hosts).
func defaultDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netproxy: dial %s: %w", addr, err)
	}
	d := net.Dialer{Timeout: DefaultDialTimeout}
	if !netaddr.IsLoopback(host) {
		d.Control = func(_, address string, _ syscall.RawConn) error { return checkResolved(host, address) }
	}
	return d.DialContext(ctx, network, addr)
}

// checkResolved refuses address, what host resolved to, when it is a
// loopback or unspecified address.
func checkResolved(host, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netproxy: dial %s: unexpected address %q", host, address)
	}
	if a := ap.Addr().Unmap(); a.IsLoopback() || a.IsUnspecified() {
		return fmt.Errorf("netproxy: %s resolves to the local address %s, which the sandbox does not reach by name", host, a)
	}
	return nil
}
