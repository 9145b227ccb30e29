package permission

import (
	"context"
	"encoding/json"
	"testing"
)

// loopbackURLs spell loopback every way a URL can; a deny rule on any one
// loopback host must catch them all.
var loopbackURLs = []string{
	"http://localhost/", "http://LOCALHOST./", "https://LocalHost:8443/x", "http://app.localhost/",
	"http://127.0.0.1/", "http://127.0.0.2:9/", "http://2130706433/", "http://0x7f.0.0.1/", "http://0x7f000001/",
	"http://0177.0.0.1/", "http://127.1/", "http://[::1]/", "http://[::ffff:7f00:1]/", "http://[::ffff:127.0.0.1]/",
	"http://[0:0:0:0:0:0:0:1]/", "http://0.0.0.0/", "http://[::]/", "http://ｌｏｃａｌｈｏｓｔ/", "http://１２７.０.０.１/",
}

func TestWebFetchCanonicalHosts(t *testing.T) {
	type tc struct {
		name  string
		mode  Mode
		allow []string
		deny  []string
		urls  []string
		want  Behavior
	}
	var tests []tc
	for _, d := range []string{"localhost", "127.0.0.1", "[::1]", "LOCALHOST.", "0x7f.1"} {
		tests = append(tests, tc{name: "deny " + d + " catches every loopback spelling", mode: ModeBypass,
			deny: []string{"WebFetch(domain:" + d + ")"}, urls: loopbackURLs, want: Deny})
	}
	tests = append(tests,
		tc{name: "deny localhost leaves other hosts alone", mode: ModeBypass, deny: []string{"WebFetch(domain:localhost)"},
			urls: []string{"http://example.com/", "http://10.0.0.1/", "http://localhost.example.com/", "http://[::2]/"}, want: Allow},
		tc{name: "deny on a name asks for IP literals it could resolve to", mode: ModeBypass, deny: []string{"WebFetch(domain:evil.example)"},
			urls: []string{"http://93.184.216.34/", "http://1572395042/", "http://[2001:db8::1]/"}, want: Ask},
		tc{name: "deny on a name catches its other spellings", mode: ModeBypass, deny: []string{"WebFetch(domain:bücher.example)"},
			urls: []string{"http://xn--bcher-kva.example/", "http://BÜCHER.example./", "http://XN--BCHER-KVA.EXAMPLE/"}, want: Deny},
		tc{name: "allow on a name never matches an IP literal", mode: ModeDefault,
			allow: []string{"WebFetch(domain:example.com)", "WebFetch(domain:localhost)", "WebFetch(domain:*.example.com)"},
			urls:  []string{"http://93.184.216.34/", "http://127.0.0.1/", "http://2130706433/", "http://[::1]/", "http://[::ffff:7f00:1]/"}, want: Ask},
		tc{name: "allow on an address matches its spellings", mode: ModeDefault, allow: []string{"WebFetch(domain:127.0.0.1)"},
			urls: []string{"http://2130706433/", "http://0x7f.0.0.1/", "http://[::ffff:7f00:1]/", "http://127.1/"}, want: Allow},
		tc{name: "allow on an address is exact", mode: ModeDefault, allow: []string{"WebFetch(domain:127.0.0.1)"},
			urls: []string{"http://localhost/", "http://127.0.0.2/", "http://[::1]/"}, want: Ask},
		tc{name: "allow on a name matches its spellings", mode: ModeDefault, allow: []string{"WebFetch(domain:bücher.example)"},
			urls: []string{"http://xn--bcher-kva.example/", "https://BÜCHER.EXAMPLE./"}, want: Allow},
		tc{name: "an unreadable host is asked under a deny rule", mode: ModeBypass, deny: []string{"WebFetch(domain:localhost)"},
			urls: []string{"http://256.0.0.1/", "http://foo.0x1/", "http://a..b/"}, want: Ask},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: tt.allow, Deny: tt.deny}}}
			c, err := New(Config{Mode: tt.mode, Rules: rs, Dirs: []string{t.TempDir()}, AllowBypass: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tt.urls {
				in, _ := json.Marshal(map[string]string{"url": u, "prompt": "p"})
				d := c.Decide(context.Background(), Call{Tool: "WebFetch", Input: in})
				if d.Behavior != tt.want {
					t.Errorf("%s: got %s (%s: %s), want %s", u, d.Behavior, d.ReasonType, d.Message, tt.want)
				}
			}
		})
	}
}

func TestFetchHostCanonical(t *testing.T) {
	for u, want := range map[string]string{
		"http://LOCALHOST./": "localhost", "http://2130706433/": "127.0.0.1", "http://[::ffff:7f00:1]:80/": "127.0.0.1",
		"https://Bücher.Example/x": "xn--bcher-kva.example", "http://[2001:DB8::1]/": "2001:db8::1",
	} {
		if got, ok := fetchHost(u); !ok || got != want {
			t.Errorf("fetchHost(%q) = %q, %v; want %q", u, got, ok, want)
		}
	}
	for _, u := range []string{"ftp://x/", "http:///", "http://256.1.1.1/", "http://a%20b/", "not a url"} {
		if got, ok := fetchHost(u); ok {
			t.Errorf("fetchHost(%q) = %q, want not ok", u, got)
		}
	}
}
