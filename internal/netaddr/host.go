// Package netaddr compares network hosts by what they address rather than
// by how they are spelt. A permission rule or a sandbox allow list names a
// host once; a URL can spell the same host many ways (LOCALHOST., 0x7f.1,
// 2130706433, [::ffff:7f00:1], full-width digits, Unicode labels), and a
// check that compares spellings can be walked around. Everything here
// works on the canonical form that Parse produces.
//
// No name is resolved: the package never does DNS. A host name and an IP
// literal are therefore never known to be the same host, except for the
// names that mean loopback by definition (localhost and *.localhost).
package netaddr

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/agentloop/agentloop/internal/lazy"
)

// Kind says what a canonical host is.
type Kind uint8

const (
	Name Kind = iota // a DNS name in ASCII (punycode) form
	IPv4             // an IPv4 address
	IPv6             // an IPv6 address that is not IPv4-mapped
)

// Host is a parsed host in canonical form. The zero Host is invalid.
type Host struct {
	canon string
	kind  Kind
	ip    netip.Addr
}

// maxLen bounds the input Parse looks at; a DNS name has at most 253 bytes
// and even a full-width Unicode spelling of one stays well below this.
const maxLen = 1024

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid host")

var profileOnce lazy.Value[*idna.Profile] // the value of profile, made at its first use

// profile maps a host name the way the WHATWG URL standard does (UTS 46,
// non-transitional, no STD3 or hyphen checks), so that case, full-width
// forms and ideographic full stops collapse as a browser or curl would
// collapse them.
func profile() *idna.Profile { return profileOnce.Get(newProfile) }

func newProfile() *idna.Profile {
	return idna.New(
		idna.MapForLookup(),
		idna.BidiRule(),
		idna.Transitional(false),
		idna.CheckHyphens(false),
		idna.CheckJoiners(true),
		idna.StrictDomainName(false),
		idna.VerifyDNSLength(false),
	)
}

// Parse returns the canonical form of host, which is a bare host as found
// in a URL after percent-decoding (no scheme, port, user or path):
//
//   - names are lower-cased, mapped and converted to punycode (IDNA/UTS 46,
//     as the WHATWG URL standard does), with one trailing dot removed; the
//     result holds only a-z, 0-9, '-', '_' and '.', with no empty label, at
//     most 63 bytes a label and 253 in all;
//   - a name whose last label is numeric is an IPv4 address in one of the
//     inet_aton forms (2130706433, 0x7f.1, 0177.0.0.1, 127.1) and becomes a
//     dotted quad, or is an error when it is not a valid one;
//   - IPv6 addresses, with or without brackets, become their RFC 5952 form
//     without brackets; IPv4-mapped ones (::ffff:127.0.0.1) become IPv4;
//     zones are refused.
//
// Anything else is an error wrapping ErrInvalid.
func Parse(host string) (Host, error) {
	h, err := parse(host)
	if err != nil {
		return Host{}, fmt.Errorf("%w %q: %w", ErrInvalid, clip(host), err)
	}
	return h, nil
}

// Canonical returns Parse(host).String().
func Canonical(host string) (string, error) {
	h, err := Parse(host)
	if err != nil {
		return "", err
	}
	return h.canon, nil
}

func parse(s string) (Host, error) {
	if len(s) > maxLen {
		return Host{}, errors.New("too long")
	}
	if s == "" {
		return Host{}, errors.New("empty")
	}
	if !utf8.ValidString(s) {
		return Host{}, errors.New("not UTF-8")
	}
	if s[0] == '[' {
		inner, ok := strings.CutSuffix(s[1:], "]")
		if !ok {
			return Host{}, errors.New("unclosed bracket")
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return Host{}, errors.New("not an IPv6 address in brackets")
		}
		return fromIP(a)
	}
	if strings.IndexByte(s, ':') >= 0 {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() {
			return Host{}, errors.New("a colon outside an IPv6 address")
		}
		return fromIP(a)
	}
	name, err := profile().ToASCII(s)
	if err != nil {
		return Host{}, fmt.Errorf("not a valid host name: %w", err)
	}
	if err := checkALabels(s, name); err != nil {
		return Host{}, err
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return Host{}, errors.New("empty")
	}
	if endsInNumber(name) {
		a, err := parseIPv4(name)
		if err != nil {
			return Host{}, err
		}
		return fromIP(a)
	}
	if err := checkName(name); err != nil {
		return Host{}, err
	}
	return Host{canon: name, kind: Name}, nil
}

func fromIP(a netip.Addr) (Host, error) {
	if a.Zone() != "" {
		return Host{}, errors.New("an IPv6 zone")
	}
	a = a.Unmap()
	k := IPv6
	if a.Is4() {
		k = IPv4
	}
	return Host{canon: a.String(), kind: k, ip: a}, nil
}

// checkALabels makes sure that every label of the input that is already an
// A-label (xn--…) comes out of the IDNA conversion unchanged. The
// conversion decodes A-labels and encodes them again; a label that decodes
// to nothing, to plain ASCII (xn--example- is "example"), or from a
// non-canonical encoding would otherwise come out as a different name than
// the one DNS is asked for. out is the conversion of in.
func checkALabels(in, out string) error {
	if !strings.Contains(strings.ToLower(in), "xn-") && isASCII(in) {
		return nil // the common case: no A-label at all
	}
	// Map rune by rune with the same profile, without the punycode step,
	// to see which labels the conversion saw as A-labels.
	var b strings.Builder
	for _, r := range in {
		m, _ := profile().ToUnicode(string(r))
		b.WriteString(m)
	}
	mapped := strings.Split(b.String(), ".")
	got := strings.Split(out, ".")
	for i, l := range mapped {
		if !strings.HasPrefix(l, "xn--") {
			continue
		}
		if len(mapped) != len(got) || got[i] != l {
			return fmt.Errorf("the label %q is not a canonical encoding of a Unicode label", clip(l))
		}
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// checkName holds a mapped name to the bytes and lengths DNS can carry.
func checkName(name string) error {
	if len(name) > 253 {
		return errors.New("longer than 253 bytes")
	}
	for l := range strings.SplitSeq(name, ".") {
		if l == "" {
			return errors.New("an empty label")
		}
		if len(l) > 63 {
			return errors.New("a label longer than 63 bytes")
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("the character %q", c)
			}
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// String returns the canonical form: a name, a dotted quad or an IPv6
// address without brackets.
func (h Host) String() string { return h.canon }

// Kind reports whether h is a name or an address.
func (h Host) Kind() Kind { return h.kind }

// IsIP reports whether h is an IP literal.
func (h Host) IsIP() bool { return h.kind != Name && h.canon != "" }

// Addr returns the address of an IP literal, or the zero Addr for a name.
func (h Host) Addr() netip.Addr { return h.ip }

// IsValid reports whether h came from a successful Parse.
func (h Host) IsValid() bool { return h.canon != "" }

// IsLoopback reports whether a connection to h reaches this machine
// without DNS: localhost and its subdomains (RFC 6761), 127.0.0.0/8, ::1,
// and the unspecified addresses 0.0.0.0 and ::, which Linux connects to
// the local host.
func (h Host) IsLoopback() bool {
	switch h.kind {
	case Name:
		return h.canon == "localhost" || strings.HasSuffix(h.canon, ".localhost")
	default:
		return h.IsIP() && (h.ip.IsLoopback() || h.ip.IsUnspecified())
	}
}

// IsLoopback reports whether host, parsed, is a loopback host; a host that
// does not parse is not.
func IsLoopback(host string) bool {
	h, err := Parse(host)
	return err == nil && h.IsLoopback()
}
