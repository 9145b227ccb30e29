package netaddr

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzCanonical checks the properties every caller relies on: the
// canonical form is a fixed point, holds only safe bytes, and an address
// form round-trips through netip.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"example.com", "LOCALHOST.", "2130706433", "0x7f.1", "0177.0.0.1", "127.1",
		"[::ffff:7f00:1]", "::1", "bücher.example", "xn--bcher-kva.example", "ｌｏｃａｌｈｏｓｔ", "１２７.０.０.１",
		"a..b", "[fe80::1%eth0]", "0x", "foo.0x1", "4294967296", "a\u3002b", "r3---sn.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			return
		}
		c := h.String()
		again, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, c, err)
		}
		if again != h {
			t.Fatalf("Parse(%q) = %+v, but Parse(%q) = %+v", s, h, c, again)
		}
		switch h.Kind() {
		case Name:
			if c == "" || len(c) > 253 || strings.HasSuffix(c, ".") {
				t.Fatalf("Parse(%q): bad name %q", s, c)
			}
			for i := 0; i < len(c); i++ {
				if b := c[i]; !('a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_' || b == '.') {
					t.Fatalf("Parse(%q) = %q holds %q", s, c, b)
				}
			}
			if endsInNumber(c) {
				t.Fatalf("Parse(%q) = name %q that ends in a number", s, c)
			}
		case IPv4, IPv6:
			a, err := netip.ParseAddr(c)
			if err != nil || a != h.Addr() || a.Is4In6() || (h.Kind() == IPv4) != a.Is4() {
				t.Fatalf("Parse(%q) = %q (%v), netip reads %v, %v", s, c, h.Kind(), a, err)
			}
		}
		// A loopback spelling is caught by a deny of localhost.
		lp, _ := ParsePattern("localhost")
		if h.IsLoopback() && lp.Denies(h) != Yes {
			t.Fatalf("deny localhost misses %q (%q)", s, c)
		}
	})
}
