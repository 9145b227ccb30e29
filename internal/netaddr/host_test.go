package netaddr

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		kind     Kind
	}{
		{"example.com", "example.com", Name},
		{"EXAMPLE.Com.", "example.com", Name},
		{"localhost", "localhost", Name},
		{"LOCALHOST.", "localhost", Name},
		{"ｌｏｃａｌｈｏｓｔ", "localhost", Name},          // full-width
		{"local\u00adhost", "localhost", Name},    // soft hyphen maps to nothing
		{"example\u3002com", "example.com", Name}, // ideographic full stop
		{"bücher.example", "xn--bcher-kva.example", Name},
		{"XN--BCHER-KVA.example", "xn--bcher-kva.example", Name},
		{"r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com", Name},
		{"_srv.example.com", "_srv.example.com", Name},
		{"a.b-c.d", "a.b-c.d", Name},

		// IPv4 spellings.
		{"127.0.0.1", "127.0.0.1", IPv4},
		{"127.0.0.1.", "127.0.0.1", IPv4},
		{"2130706433", "127.0.0.1", IPv4},
		{"0x7f000001", "127.0.0.1", IPv4},
		{"0X7F.1", "127.0.0.1", IPv4},
		{"0x7f.0.0.1", "127.0.0.1", IPv4},
		{"0177.0.0.1", "127.0.0.1", IPv4},
		{"0177.1", "127.0.0.1", IPv4},
		{"127.1", "127.0.0.1", IPv4},
		{"127.0.1", "127.0.0.1", IPv4},
		{"017700000001", "127.0.0.1", IPv4},
		{"１２７.０.０.１", "127.0.0.1", IPv4},
		{"0", "0.0.0.0", IPv4},
		{"0x", "0.0.0.0", IPv4},
		{"4294967295", "255.255.255.255", IPv4},
		{"169.254.169.254", "169.254.169.254", IPv4},
		{"1.2.65535", "1.2.255.255", IPv4},

		// IPv6.
		{"::1", "::1", IPv6},
		{"[::1]", "::1", IPv6},
		{"[0:0:0:0:0:0:0:1]", "::1", IPv6},
		{"[::FFFF:7F00:1]", "127.0.0.1", IPv4},
		{"::ffff:127.0.0.1", "127.0.0.1", IPv4},
		{"[::ffff:127.0.0.1]", "127.0.0.1", IPv4},
		{"[2001:DB8::0:1]", "2001:db8::1", IPv6},
		{"[::]", "::", IPv6},
	}
	for _, tt := range tests {
		h, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, h.String()); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
		if h.Kind() != tt.kind {
			t.Errorf("Parse(%q).Kind() = %v, want %v", tt.in, h.Kind(), tt.kind)
		}
		if got, _ := Canonical(tt.in); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalErrors(t *testing.T) {
	for _, in := range []string{
		"", ".", "..", "a..b", ".example.com", "example.com..",
		"example.com:80", "[::1]:80", "[127.0.0.1]", "[::1", "fe80::1%eth0", "[fe80::1%25eth0]",
		"256.0.0.1", "1.2.3.4.5", "127.0.0.256", "1.2.16777216", "4294967296", "0x100000000",
		"08.0.0.1", "0x7g.1", "foo.123", "foo.0x1", "1..2",
		"exa mple.com", "a/b", "a@b", "a%2fb", "a\\b", "a\x00b", "a?b", "a#b",
		"xn--", "xn--a.com", "xn--example-.com", "xn--127-", "1\u3002xn--", "xn--xn--", "XN--LOCALHOST-", "ｘｎ－－localhost-",
		"xn--0x-", "a.xn--7fb-.b", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "ab",
		strings.Repeat("x", maxLen+1),
	} {
		h, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want an error", in, h)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error %v does not wrap ErrInvalid", in, err)
		}
	}
}

func TestLoopback(t *testing.T) {
	yes := []string{"localhost", "LOCALHOST.", "a.b.localhost", "127.0.0.1", "127.255.1.2", "2130706433",
		"0x7f.1", "0177.0.0.1", "[::1]", "::ffff:7f00:1", "0.0.0.0", "0", "[::]", "ｌｏｃａｌｈｏｓｔ"}
	no := []string{"localhost.example.com", "notlocalhost", "128.0.0.1", "10.0.0.1", "::2", "[::127.0.0.1]",
		"example.com", "", "bad host"}
	for _, h := range yes {
		if !IsLoopback(h) {
			t.Errorf("IsLoopback(%q) = false", h)
		}
	}
	for _, h := range no {
		if IsLoopback(h) {
			t.Errorf("IsLoopback(%q) = true", h)
		}
	}
}

func TestHostAccessors(t *testing.T) {
	h, err := Parse("0x7f.1")
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsIP() || h.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("0x7f.1: IsIP %v Addr %v", h.IsIP(), h.Addr())
	}
	n, _ := Parse("example.com")
	if n.IsIP() || n.Addr().IsValid() {
		t.Errorf("example.com: IsIP %v Addr %v", n.IsIP(), n.Addr())
	}
	var zero Host
	if zero.IsValid() || zero.IsIP() || zero.IsLoopback() {
		t.Error("the zero Host claims to be something")
	}
}
