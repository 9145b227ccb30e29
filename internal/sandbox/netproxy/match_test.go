package netproxy

import (
	"testing"

	"github.com/agentloop/agentloop/internal/netaddr"
)

func TestDomainMatcher(t *testing.T) {
	tests := []struct {
		name            string
		allowed, denied []string
		yes, no         []string
	}{
		{name: "empty allows nothing", no: []string{"example.com", "127.0.0.1", "localhost"}},
		{name: "exact", allowed: []string{"Example.COM."},
			yes: []string{"example.com"}, no: []string{"www.example.com", "example.com.evil", "93.184.216.34"}},
		{name: "subdomains, not the apex", allowed: []string{"*.github.com"},
			yes: []string{"api.github.com", "a.b.github.com"}, no: []string{"github.com", "evilgithub.com", "140.82.112.3"}},
		{name: "denied wins", allowed: []string{"*.example.com"}, denied: []string{"secret.example.com"},
			yes: []string{"www.example.com"}, no: []string{"secret.example.com"}},
		{name: "a denied name refuses IP literals", allowed: []string{"*", "10.0.0.1"}, denied: []string{"evil.example"},
			yes: []string{"good.example"}, no: []string{"10.0.0.1", "1.2.3.4", "2001:db8::1", "evil.example"}},
		{name: "a denied loopback refuses every loopback", allowed: []string{"*"}, denied: []string{"localhost"},
			yes: []string{"example.com", "10.0.0.1"}, no: []string{"localhost", "a.localhost", "127.0.0.1", "127.0.0.9", "::1", "0.0.0.0", "::"}},
		{name: "a name never allows an IP", allowed: []string{"localhost", "example.com"},
			yes: []string{"localhost"}, no: []string{"127.0.0.1", "::1"}},
		{name: "an address allows itself", allowed: []string{"127.0.0.1", "[::1]"},
			yes: []string{"127.0.0.1", "::1"}, no: []string{"localhost", "127.0.0.2"}},
		{name: "IDN", allowed: []string{"bücher.example"}, yes: []string{"xn--bcher-kva.example"}, no: []string{"bucher.example"}},
		{name: "invalid allowed entries are skipped", allowed: []string{"exa mple.com", "ok.example"},
			yes: []string{"ok.example"}, no: []string{"exa mple.com"}},
		{name: "an invalid denied entry refuses everything", allowed: []string{"*"}, denied: []string{"http://x/"},
			no: []string{"example.com", "x"}},
		{name: "non-canonical host strings are refused", allowed: []string{"*"},
			no: []string{"", "a..b", "bad host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := DomainMatcher(tt.allowed, tt.denied)
			for _, h := range tt.yes {
				c, err := netaddr.Canonical(h)
				if err != nil {
					t.Fatal(err)
				}
				if !m(c, 443) {
					t.Errorf("%s refused", h)
				}
			}
			for _, h := range tt.no {
				if m(h, 443) {
					t.Errorf("%s allowed", h)
				}
			}
		})
	}
}

func TestCompileDomainsErrors(t *testing.T) {
	if _, err := CompileDomains([]string{"ok.example", "*.*.x y"}, nil); err == nil {
		t.Error("an invalid allowed pattern was not reported")
	}
	if _, err := CompileDomains(nil, []string{"a:b"}); err == nil {
		t.Error("an invalid denied pattern was not reported")
	}
	if _, err := CompileDomains([]string{"*.example.com", "example.com", "1.2.3.4"}, []string{"localhost"}); err != nil {
		t.Errorf("valid patterns reported: %v", err)
	}
}
