package anthropic

import (
	"net/http"
	"testing"
)

// TestClientURL checks the URLs a client posts to, kept per path and
// query: each its own, the base URL's path kept, the same string again.
func TestClientURL(t *testing.T) {
	c, err := newAPIClient(http.DefaultClient, "https://gateway.example/anthropic", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, query, want string }{
		{"v1/messages", "", "https://gateway.example/anthropic/v1/messages"},
		{"v1/messages", "beta=true", "https://gateway.example/anthropic/v1/messages?beta=true"},
		{"v1/messages/count_tokens", "beta=true", "https://gateway.example/anthropic/v1/messages/count_tokens?beta=true"},
		{"v1/messages", "", "https://gateway.example/anthropic/v1/messages"},
	} {
		if got := c.url(tc.path, tc.query); got != tc.want {
			t.Errorf("url(%q, %q) = %q, want %q", tc.path, tc.query, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(20, func() { c.url("v1/messages", "beta=true") }); n != 0 {
		t.Errorf("a kept URL costs %v allocations, want 0", n)
	}
}
