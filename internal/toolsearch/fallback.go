package toolsearch

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The default mode (ENABLE_TOOL_SEARCH unset) turns tool search off where
// the reference does: for models older than the 4.5 generation, for an API
// base URL that is not Anthropic's, and when experimental betas are
// switched off. agentloop's tool search runs in the client and would work
// there too, so an explicit "true" or "auto" keeps it on; the fallbacks
// only keep the default behaviour in step with the reference.

// DisableBetasVar is the variable that switches off the reference's
// experimental API betas, tool search among them.
const DisableBetasVar = "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"

// ModelSupported reports whether the default mode defers tools for model:
// a Claude model ID of generation 4.5 or later ("claude-sonnet-4-5",
// "claude-opus-5-5-20260101", "anthropic.claude-haiku-4-5-v1:0"). IDs
// where no Claude generation can be read (aliases, other providers'
// names) count as supported, so that an unknown name does not lose the
// feature.
func ModelSupported(model string) bool {
	major, minor, ok := generation(model)
	if !ok {
		return true
	}
	return major > 4 || major == 4 && minor >= 5
}

// generation reads the version of a Claude model ID: the first number
// after "claude-", and the one after it when it is a short number (a
// minor version rather than a date), separated by "-" or ".":
// "claude-3-5-haiku" is 3.5, "claude-sonnet-4-20250514" 4.0,
// "claude-opus-4-1" 4.1, "claude-2.1" 2.1.
func generation(model string) (major, minor int, ok bool) {
	m := strings.ToLower(model)
	i := strings.Index(m, "claude-")
	if i < 0 {
		return 0, 0, false
	}
	// Read part by part, without making the list of parts: the loop asks
	// this before every request.
	found := false
	for rest := m[i+len("claude-"):]; rest != ""; {
		j := strings.IndexAny(rest, "-.")
		p := rest
		if j >= 0 {
			p, rest = rest[:j], rest[j+1:]
		} else {
			rest = ""
		}
		if p == "" { // as between two separators
			continue
		}
		if found {
			if n, ok := shortNumber(p); ok {
				minor = n
			}
			break
		}
		if n, ok := shortNumber(p); ok {
			major, found = n, true
		}
	}
	return major, minor, found
}

// shortNumber reads p when it is a number of at most two characters, as
// strconv.Atoi reads it ("7", "42", "+7"), without Atoi's allocation of
// an error for the parts that are not numbers.
func shortNumber(p string) (int, bool) {
	if len(p) == 0 || len(p) > 2 {
		return 0, false
	}
	for i := 0; i < len(p); i++ {
		if (p[i] < '0' || p[i] > '9') && !(i == 0 && p[i] == '+' && len(p) == 2) {
			return 0, false
		}
	}
	n, err := strconv.Atoi(p)
	return n, err == nil
}

// FirstParty reports whether baseURL, the API address of the session's
// built-in provider, is Anthropic's own: empty (the default address), a
// host under anthropic.com, or a loopback address. Loopback counts as
// first party because a local fake or gateway forwards to the real API:
// the reference keeps tool search on against one too.
func FirstParty(baseURL string) bool {
	if strings.TrimSpace(baseURL) == "" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "anthropic.com" || strings.HasSuffix(host, ".anthropic.com") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Truthy reports whether an environment value switches something on:
// "1", "true", "yes" or "on", ignoring case and surrounding space.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
