package netproxy

import (
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/internal/netaddr"
)

// DomainMatcher returns an Allow function for Config with the semantics of
// the sandbox's allowedDomains and deniedDomains (see netaddr.Pattern):
// "example.com" is that host, "*.example.com" its subdomains at any depth
// but not the apex, "*" every host. A host is allowed when an allowed
// pattern matches it exactly and no denied pattern catches it; an empty
// allowed list allows nothing. Denied patterns are the wide test of
// netaddr.Pattern.Denies: a denied loopback host catches every loopback
// spelling, and a denied name refuses every IP literal (it could resolve
// to one). An IP literal is allowed only by an allowed pattern naming that
// address, or by "*". Ports are not considered.
//
// Invalid allowed patterns are skipped; an invalid denied pattern makes
// the matcher refuse everything, since what it meant to deny is unknown.
// Use CompileDomains to see the errors.
func DomainMatcher(allowed, denied []string) func(host string, port int) bool {
	m, _ := CompileDomains(allowed, denied)
	return m
}

// CompileDomains is DomainMatcher that also reports the invalid patterns.
// The matcher it returns is usable even with an error, with the fallbacks
// DomainMatcher documents.
func CompileDomains(allowed, denied []string) (func(host string, port int) bool, error) {
	var errs []error
	var allow, deny []netaddr.Pattern
	for _, s := range allowed {
		p, err := netaddr.ParsePattern(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed domain: %w", err))
			continue
		}
		allow = append(allow, p)
	}
	badDeny := false
	for _, s := range denied {
		p, err := netaddr.ParsePattern(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("denied domain: %w", err))
			badDeny = true
			continue
		}
		deny = append(deny, p)
	}
	err := errors.Join(errs...)
	if badDeny {
		return func(string, int) bool { return false }, err
	}
	return func(host string, _ int) bool {
		h, err := netaddr.Parse(host)
		if err != nil {
			return false
		}
		for _, p := range deny {
			if p.Denies(h) != netaddr.No {
				return false
			}
		}
		for _, p := range allow {
			if p.Allows(h) {
				return true
			}
		}
		return false
	}, err
}
