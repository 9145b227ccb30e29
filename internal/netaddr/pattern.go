package netaddr

import (
	"errors"
	"fmt"
	"strings"
)

// Pattern is a compiled host pattern, the domain part of a
// WebFetch(domain:…) rule or an entry of the sandbox's allowedDomains and
// deniedDomains:
//
//	"*"              every host, IP literals included
//	"*.example.com"  every subdomain of example.com, at any depth; not the apex
//	"api.*.dev"      '*' inside a name matches within one label
//	"example.com"    that name
//	"127.0.0.1"      that address, however the host spells it
//
// Name parts are canonicalised as Parse does, so a pattern written in
// Unicode, upper case or with a trailing dot means what it says. A name
// pattern never matches an IP literal, and an address pattern never matches
// a name: nothing here resolves names. Denies is the broader test for deny
// lists; Allows the strict one for allow lists.
type Pattern struct {
	any    bool
	suffix string   // "*.example.com": ".example.com"
	labels []string // name with stars in labels
	host   Host     // exact name or address
}

// ParsePattern compiles a host pattern; see Pattern.
func ParsePattern(s string) (Pattern, error) {
	p, err := parsePattern(strings.TrimSpace(s))
	if err != nil {
		return Pattern{}, fmt.Errorf("host pattern %q: %w", clip(s), err)
	}
	return p, nil
}

func parsePattern(s string) (Pattern, error) {
	switch {
	case s == "*":
		return Pattern{any: true}, nil
	case strings.HasPrefix(s, "*.") && !strings.Contains(s[2:], "*"):
		h, err := Parse(s[2:])
		if err != nil {
			return Pattern{}, err
		}
		if h.IsIP() {
			return Pattern{}, errors.New("a subdomain pattern over an IP address")
		}
		return Pattern{suffix: "." + h.canon}, nil
	case !strings.Contains(s, "*"):
		h, err := Parse(s)
		if err != nil {
			return Pattern{}, err
		}
		return Pattern{host: h}, nil
	}
	// Stars inside labels: canonicalise each label without a star alone,
	// and hold starred labels to plain ASCII so that their meaning cannot
	// depend on a mapping.
	s = strings.TrimSuffix(s, ".")
	labels := strings.Split(s, ".")
	for i, l := range labels {
		if !strings.Contains(l, "*") {
			a, err := profile().ToASCII(l)
			if err != nil || strings.Contains(a, ".") || checkName(a) != nil {
				return Pattern{}, fmt.Errorf("label %q is not a host name label", clip(l))
			}
			labels[i] = a
			continue
		}
		l = strings.ToLower(l)
		for j := 0; j < len(l); j++ {
			if c := l[j]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '*') {
				return Pattern{}, fmt.Errorf("label %q has the character %q", clip(l), c)
			}
		}
		labels[i] = l
	}
	return Pattern{labels: labels}, nil
}

// String returns the pattern in canonical form.
func (p Pattern) String() string {
	switch {
	case p.any:
		return "*"
	case p.suffix != "":
		return "*" + p.suffix
	case p.labels != nil:
		return strings.Join(p.labels, ".")
	}
	return p.host.canon
}

// IsLoopback reports whether the pattern names loopback hosts only
// (localhost, *.localhost, 127.0.0.1, ::1, …).
func (p Pattern) IsLoopback() bool {
	return p.host.IsLoopback() || p.suffix != "" && Host{canon: p.suffix[1:]}.IsLoopback()
}

// Allows reports whether p matches h exactly: the test for allow lists.
func (p Pattern) Allows(h Host) bool {
	if !h.IsValid() {
		return false
	}
	switch {
	case p.any:
		return true
	case p.suffix != "":
		return h.kind == Name && strings.HasSuffix(h.canon, p.suffix)
	case p.labels != nil:
		return h.kind == Name && matchLabels(p.labels, h.canon)
	}
	return p.host.IsValid() && h.canon == p.host.canon
}

// Match is the answer of Denies.
type Match uint8

const (
	No    Match = iota // h is certainly not what the pattern names
	Maybe              // h might be: an IP literal that a named host could resolve to
	Yes                // h is what the pattern names
)

// Denies reports whether p, as a deny entry, catches h. It widens Allows
// in two ways: a pattern naming a loopback host catches every loopback
// host (so a deny of localhost also catches 127.0.0.2, [::1] and
// 0x7f.1), and a pattern naming hosts by name answers Maybe for an IP
// literal, which the name could resolve to; callers treat Maybe as
// "cannot prove it is not", which for a deny list means refuse or ask.
func (p Pattern) Denies(h Host) Match {
	if !h.IsValid() {
		return No
	}
	if p.Allows(h) || p.IsLoopback() && h.IsLoopback() {
		return Yes
	}
	if h.IsIP() && !p.IsLoopback() && (p.suffix != "" || p.labels != nil || p.host.kind == Name && p.host.IsValid()) {
		return Maybe
	}
	return No
}

// matchLabels matches a name label by label, '*' matching any run of
// characters within one label.
func matchLabels(pattern []string, name string) bool {
	n := strings.Split(name, ".")
	if len(n) != len(pattern) {
		return false
	}
	for i, l := range pattern {
		if !globLabel(l, n[i]) {
			return false
		}
	}
	return true
}

func globLabel(p, s string) bool {
	parts := strings.Split(p, "*")
	if len(parts) == 1 {
		return p == s
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, q := range parts[1 : len(parts)-1] {
		i := strings.Index(mid, q)
		if i < 0 {
			return false
		}
		mid = mid[i+len(q):]
	}
	return true
}
