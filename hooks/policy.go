package hooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The managed settings keys that restrict http hooks (Config.Policy).
const (
	policyHTTPURLs    = "allowedHttpHookUrls"
	policyHTTPEnvVars = "httpHookAllowedEnvVars"
)

// httpPolicy is what Config.Policy says about http hooks. A nil list
// restricts nothing; a non-nil empty one allows nothing.
type httpPolicy struct {
	urls    []string // URL patterns, "*" a wildcard
	envVars []string
}

// readPolicy reads the http hook restrictions of Config.Policy. A value
// that is not a list of strings allows nothing, with a warning.
func readPolicy(p map[string]json.RawMessage) (httpPolicy, []string) {
	var pol httpPolicy
	var warns []string
	read := func(key string) []string {
		raw, ok := p[key]
		if !ok {
			return nil
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil || list == nil {
			why := "null"
			if err != nil {
				why = err.Error()
			}
			warns = append(warns, fmt.Sprintf("managed setting %s is not a list of strings (%s); it is read as an empty list", key, why))
			return []string{}
		}
		return list
	}
	pol.urls = read(policyHTTPURLs)
	pol.envVars = read(policyHTTPEnvVars)
	return pol, warns
}

// urlAllowed reports whether an http hook may post to url.
func (p httpPolicy) urlAllowed(url string) bool {
	if p.urls == nil {
		return true
	}
	return slices.ContainsFunc(p.urls, func(pat string) bool { return urlMatch(pat, url) })
}

// allowedVars is the list of variables a hook that allows own may expand in
// its headers.
func (p httpPolicy) allowedVars(own []string) []string {
	if p.envVars == nil {
		return own
	}
	var out []string
	for _, v := range own {
		if slices.Contains(p.envVars, v) {
			out = append(out, v)
		}
	}
	return out
}

// urlMatch reports whether all of url matches pattern, in which "*"
// matches any run of characters (none included) and everything else
// matches itself.
func urlMatch(pattern, url string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return url == pattern
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(url) < len(first)+len(last) || !strings.HasPrefix(url, first) || !strings.HasSuffix(url, last) {
		return false
	}
	rest := url[len(first) : len(url)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}
