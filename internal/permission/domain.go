package permission

import (
	"net/url"
	"strings"

	"github.com/agentloop/agentloop/internal/netaddr"
)

// domainPattern is a compiled WebFetch(domain:…) specifier. Hosts and
// patterns are compared in the canonical form of package netaddr, so that
// LOCALHOST., 0x7f.1, 2130706433 and [::ffff:7f00:1] are the hosts they
// address and not new spellings a rule has never heard of.
type domainPattern struct {
	p netaddr.Pattern
}

func compileDomain(spec string) (domainPattern, error) {
	p, err := netaddr.ParsePattern(spec)
	if err != nil {
		return domainPattern{}, err
	}
	return domainPattern{p: p}, nil
}

// match reports whether host, a canonical host from fetchHost, is one the
// pattern names exactly: the test for allow rules. A name never matches an
// IP literal (nothing is resolved at check time).
func (p domainPattern) match(host string) bool {
	h, err := netaddr.Parse(host)
	return err == nil && p.p.Allows(h)
}

// matchAs is the test for a rule of behaviour b. Allow rules match
// exactly. Deny and ask rules match more widely: a rule on a loopback host
// (localhost, 127.0.0.1, ::1) catches every loopback spelling, and a rule
// on a name might catch an IP literal that the name resolves to, which is
// reported as m with may set, so that the call is asked rather than
// allowed.
func (p domainPattern) matchAs(b Behavior, host string) (m, may bool) {
	h, err := netaddr.Parse(host)
	if err != nil {
		return b != Allow, true
	}
	if b == Allow {
		return p.p.Allows(h), false
	}
	switch p.p.Denies(h) {
	case netaddr.Yes:
		return true, false
	case netaddr.Maybe:
		return true, true
	}
	return false, false
}

// fetchHost returns the canonical host (netaddr.Canonical) of a URL that
// WebFetch would fetch. It reports false for URLs it cannot be sure about:
// unparsable, not http(s), or with a host that is not a valid name or
// address.
func fetchHost(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	h := u.Hostname()
	if h == "" || strings.ContainsAny(h, "%\\ @") {
		return "", false
	}
	c, err := netaddr.Canonical(h)
	if err != nil {
		return "", false
	}
	return c, true
}
