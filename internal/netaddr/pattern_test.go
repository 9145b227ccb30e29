package netaddr

import "testing"

func mustHost(t *testing.T, s string) Host {
	t.Helper()
	h, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPatternAllows(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"example.com", []string{"example.com", "EXAMPLE.COM.", "ｅｘａｍｐｌｅ.com"},
			[]string{"a.example.com", "example.com.evil", "xexample.com", "93.184.216.34"}},
		{"Example.COM.", []string{"example.com"}, []string{"www.example.com"}},
		{"*.example.com", []string{"a.example.com", "a.b.example.com", "A.EXAMPLE.COM."},
			[]string{"example.com", "aexample.com", "1.2.3.4"}},
		{"api.*.example.com", []string{"api.eu.example.com"}, []string{"api.a.b.example.com", "web.eu.example.com"}},
		{"a*b.dev", []string{"ab.dev", "axxb.dev"}, []string{"a.b.dev", "ba.dev"}},
		{"bücher.example", []string{"xn--bcher-kva.example", "BÜCHER.example"}, []string{"bucher.example"}},
		{"*", []string{"anything.org", "127.0.0.1", "::1"}, nil},
		{"*.*.*.*", []string{"a.b.c.d"}, []string{"1.2.3.4", "127.0.0.1", "2130706433", "a.b.c"}},
		{"1*.*.*.*", []string{"1a.b.c.d"}, []string{"127.0.0.1"}},
		{"localhost", []string{"localhost", "LOCALHOST."}, []string{"127.0.0.1", "::1", "a.localhost"}},
		{"127.0.0.1", []string{"127.0.0.1", "2130706433", "0x7f.0.0.1", "[::ffff:7f00:1]", "127.1"},
			[]string{"localhost", "127.0.0.2", "::1"}},
		{"[::1]", []string{"::1", "[0::1]"}, []string{"127.0.0.1", "localhost"}},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", tt.pattern, err)
			continue
		}
		for _, h := range tt.yes {
			if !p.Allows(mustHost(t, h)) {
				t.Errorf("%s should allow %s", tt.pattern, h)
			}
		}
		for _, h := range tt.no {
			if p.Allows(mustHost(t, h)) {
				t.Errorf("%s should not allow %s", tt.pattern, h)
			}
		}
	}
}

func TestPatternDenies(t *testing.T) {
	loopbacks := []string{"localhost", "LOCALHOST.", "x.localhost", "127.0.0.1", "127.0.0.2", "2130706433",
		"0x7f.0.0.1", "0177.0.0.1", "127.1", "[::1]", "[::ffff:7f00:1]", "::ffff:127.0.0.1", "0.0.0.0", "[::]"}
	tests := []struct {
		pattern         string
		yes, maybe, no  []string
		loopbackPattern bool
	}{
		{pattern: "localhost", yes: loopbacks, no: []string{"example.com", "10.0.0.1", "::2"}, loopbackPattern: true},
		{pattern: "127.0.0.1", yes: loopbacks, no: []string{"example.com", "10.0.0.1"}, loopbackPattern: true},
		{pattern: "[::1]", yes: loopbacks, no: []string{"example.com"}, loopbackPattern: true},
		{pattern: "*.localhost", yes: loopbacks, no: []string{"example.com", "10.0.0.1"}, loopbackPattern: true},
		{pattern: "evil.com", yes: []string{"EVIL.com."}, maybe: []string{"1.2.3.4", "[2001:db8::1]", "127.0.0.1"},
			no: []string{"good.com", "a.evil.com"}},
		{pattern: "*.evil.com", yes: []string{"a.evil.com"}, maybe: []string{"1.2.3.4"}, no: []string{"evil.com"}},
		{pattern: "1.2.3.4", yes: []string{"16909060", "1.2.3.4"}, no: []string{"1.2.3.5", "example.com", "localhost"}},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", tt.pattern, err)
		}
		if p.IsLoopback() != tt.loopbackPattern {
			t.Errorf("%s: IsLoopback = %v", tt.pattern, p.IsLoopback())
		}
		for want, hosts := range map[Match][]string{Yes: tt.yes, Maybe: tt.maybe, No: tt.no} {
			for _, h := range hosts {
				if got := p.Denies(mustHost(t, h)); got != want {
					t.Errorf("%s denies %s: %v, want %v", tt.pattern, h, got, want)
				}
			}
		}
	}
}

func TestPatternErrors(t *testing.T) {
	for _, s := range []string{"", "*.", "*.1.2.3.4", "a b.com", "http://x.com", "x.com:80", "a.*.c d", "ü*.com",
		"a..*.com"} {
		if p, err := ParsePattern(s); err == nil {
			t.Errorf("ParsePattern(%q) = %v, want an error", s, p)
		}
	}
}

func TestPatternString(t *testing.T) {
	for in, want := range map[string]string{
		"*": "*", "*.Example.COM.": "*.example.com", "API.*.Dev": "api.*.dev", "0x7f.1": "127.0.0.1", "[::1]": "::1",
		"Bücher.example": "xn--bcher-kva.example",
	} {
		p, err := ParsePattern(in)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("ParsePattern(%q).String() = %q, want %q", in, p.String(), want)
		}
	}
}
