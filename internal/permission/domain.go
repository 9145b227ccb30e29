package permission

import (
	"fmt"
	"net/url"
	"strings"
)

// domainPattern is a compiled WebFetch(domain:…) specifier.
type domainPattern struct {
	any    bool     // domain:*
	suffix string   // *.example.com: ".example.com", any depth of subdomain, not the apex
	labels []string // otherwise the host's labels, '*' matching within one label
}

func compileDomain(spec string) (domainPattern, error) {
	d := strings.ToLower(strings.TrimSpace(spec))
	d = strings.TrimSuffix(d, ".")
	switch {
	case d == "":
		return domainPattern{}, fmt.Errorf("empty domain")
	case d == "*":
		return domainPattern{any: true}, nil
	case strings.HasPrefix(d, "*.") && !strings.Contains(d[2:], "*"):
		return domainPattern{suffix: d[1:]}, nil
	}
	if strings.ContainsAny(d, "/:@ ") {
		return domainPattern{}, fmt.Errorf("domain %q is not a host name", spec)
	}
	return domainPattern{labels: strings.Split(d, ".")}, nil
}

func (p domainPattern) match(host string) bool {
	switch {
	case p.any:
		return true
	case p.suffix != "":
		return strings.HasSuffix(host, p.suffix) && len(host) > len(p.suffix)
	}
	hl := strings.Split(host, ".")
	if len(hl) != len(p.labels) {
		return false
	}
	for i, l := range p.labels {
		if !newWildcard(l).match(hl[i]) {
			return false
		}
	}
	return true
}

// fetchHost returns the lower-cased host of a URL that WebFetch would
// fetch. It reports false for URLs it cannot be sure about: unparsable,
// not http(s), or with escapes or odd characters in the host.
func fetchHost(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	h := u.Hostname()
	if h == "" || strings.ContainsAny(h, "%\\ @") {
		return "", false
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return h, h != ""
}
