package anthropic

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/http/httpproxy"

	"github.com/agentloop/agentloop/internal/lazy"
)

// EnvCustomHeaders names the variable whose lines ("Name: value", one a
// line) are added as headers to every request, as in the reference CLI.
// Blank lines are skipped; a line without a colon or with an empty name
// makes [New] fail naming the variable. Options.Headers win over it for
// the same name.
const EnvCustomHeaders = "ANTHROPIC_CUSTOM_HEADERS"

// ParseCustomHeaders parses the value of [EnvCustomHeaders]: lines of
// "Name: value", the value trimmed of surrounding space. A later line
// replaces an earlier one of the same name (compared case-insensitively).
// The error names the variable and the line.
func ParseCustomHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("anthropic: %s line %d: want \"Name: value\"", EnvCustomHeaders, i+1)
		}
		for k := range out {
			if strings.EqualFold(k, name) {
				delete(out, k)
			}
		}
		out[name] = strings.TrimSpace(value)
	}
	return out, nil
}

// getenv is Options.Getenv, or os.Getenv without one.
func (o *Options) getenv(key string) string {
	if o.Getenv != nil {
		return o.Getenv(key)
	}
	return os.Getenv(key)
}

// customHeaders reads EnvCustomHeaders into a canonical string (sorted
// "name: value" lines), a comparable part of [config], and the map.
func customHeaders(getenv func(string) string) (string, map[string]string, error) {
	v := getenv(EnvCustomHeaders)
	if strings.TrimSpace(v) == "" {
		return "", nil, nil
	}
	h, err := ParseCustomHeaders(v)
	if err != nil {
		return "", nil, err
	}
	lines := make([]string, 0, len(h))
	for k, v := range h {
		lines = append(lines, k+": "+v)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), h, nil
}

// proxyConfig is the proxy the environment asks for, as net/http reads it
// (upper case first, then lower case; REQUEST_METHOD set drops
// HTTP_PROXY, as there).
type proxyConfig struct{ https, http, no string }

func readProxy(getenv func(string) string) proxyConfig {
	first := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	pc := proxyConfig{
		https: first("HTTPS_PROXY", "https_proxy"),
		http:  first("HTTP_PROXY", "http_proxy"),
		no:    first("NO_PROXY", "no_proxy"),
	}
	if getenv("REQUEST_METHOD") != "" {
		pc.http = "" // as net/http: a CGI environment's Proxy header is not trusted
	}
	return pc
}

var processProxyOnce lazy.Value[proxyConfig] // the value of processProxy, built at its first use

// processProxy returns the proxy of the process environment when the shared
// client was made: net/http reads it once, so that is the proxy the
// shared client uses.
func processProxy() proxyConfig {
	return processProxyOnce.Get(func() proxyConfig { return readProxy(os.Getenv) })
}

// proxyClients are the clients of proxies other than the process's, one
// per proxy, each sharing nothing with the shared client but its
// settings.
var proxyClients struct {
	sync.Mutex
	m map[proxyConfig]*http.Client
}

// clientFor returns the HTTP client of a provider without
// Options.HTTPClient: the shared one when pc is the process's proxy, else
// one that sends through pc.
func clientFor(pc proxyConfig) *http.Client {
	if pc == processProxy() {
		return defaultHTTPClient()
	}
	proxyClients.Lock()
	defer proxyClients.Unlock()
	if c, ok := proxyClients.m[pc]; ok {
		return c
	}
	base := defaultHTTPClient()
	t, ok := base.Transport.(*http.Transport)
	if !ok {
		return base
	}
	t = t.Clone()
	fn := (&httpproxy.Config{HTTPSProxy: pc.https, HTTPProxy: pc.http, NoProxy: pc.no}).ProxyFunc()
	t.Proxy = func(r *http.Request) (*url.URL, error) { return fn(r.URL) }
	c := &http.Client{Transport: t}
	if len(proxyClients.m) < maxShared {
		if proxyClients.m == nil {
			proxyClients.m = map[proxyConfig]*http.Client{}
		}
		proxyClients.m[pc] = c
	}
	return c
}
