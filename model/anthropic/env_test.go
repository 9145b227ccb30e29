package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCustomHeaders(t *testing.T) {
	got, err := ParseCustomHeaders("X-One: 1\r\n\n  X-Two:two words  \nx-one: again\nX-Empty:\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"x-one": "again", "X-Two": "two words", "X-Empty": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"X-One: 1\nno colon", ": value", "Bad Name: v"} {
		_, err := ParseCustomHeaders(bad)
		if err == nil || !strings.Contains(err.Error(), EnvCustomHeaders) {
			t.Errorf("%q: err %v, want one naming %s", bad, err, EnvCustomHeaders)
		}
	}
}

// mapEnv is an Options.Getenv over a map, nothing else.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestGetenvConfiguresProvider: with Options.Getenv, the provider reads
// its base URL, credentials, custom headers and retries from it, not from
// the process environment.
func TestGetenvConfiguresProvider(t *testing.T) {
	a := newFakeAPI(t, sseReply(helloStream()))
	b := newFakeAPI(t, sseReply(helloStream()))
	t.Setenv("ANTHROPIC_BASE_URL", a.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-process")
	t.Setenv(EnvCustomHeaders, "")
	env := mapEnv(map[string]string{"ANTHROPIC_BASE_URL": b.URL, "ANTHROPIC_API_KEY": "sk-layer",
		EnvCustomHeaders: "X-Gateway: g1\nAuthorization-Extra: e", EnvMaxRetries: "0"})
	for _, shared := range []bool{false, true} {
		mk := New
		if shared {
			mk = Shared
		}
		p, err := mk(&Options{Getenv: env})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests to the process's base URL", n)
	}
	reqs := b.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to Getenv's base URL, want 2", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("X-Api-Key") != "sk-layer" || r.Header.Get("X-Gateway") != "g1" || r.Header.Get("Authorization-Extra") != "e" {
			t.Errorf("headers %v", r.Header)
		}
	}
	// Options.Headers win over the variable's.
	p, err := New(&Options{Getenv: env, Headers: map[string]string{"X-Gateway": "opt"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if g := b.requests()[2].Header.Get("X-Gateway"); g != "opt" {
		t.Errorf("X-Gateway %q, want Options.Headers' opt", g)
	}
	// A malformed variable fails New, naming it.
	_, err = New(&Options{Getenv: mapEnv(map[string]string{"ANTHROPIC_API_KEY": "k", EnvCustomHeaders: "nonsense"})})
	if err == nil || !strings.Contains(err.Error(), EnvCustomHeaders) {
		t.Errorf("err %v, want one naming %s", err, EnvCustomHeaders)
	}
	// A credential header in the variable is a credential.
	if _, err := New(&Options{Getenv: mapEnv(map[string]string{EnvCustomHeaders: "Authorization: Bearer gw"})}); err != nil {
		t.Errorf("credential in %s: %v", EnvCustomHeaders, err)
	}
}

// TestGetenvProxy: the proxy variables Getenv yields carry the requests,
// though the process has none: the API's name (.test, never resolvable)
// is reached only through the proxy, the fake API standing in for it.
func TestGetenvProxy(t *testing.T) {
	proxy := newFakeAPI(t, sseReply(helloStream()))
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"} {
		t.Setenv(k, "")
	}
	p, err := Shared(&Options{Getenv: mapEnv(map[string]string{"ANTHROPIC_API_KEY": "k",
		"ANTHROPIC_BASE_URL": "http://api.agentloop.test", "HTTP_PROXY": proxy.URL, EnvMaxRetries: "0"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(proxy.requests()); n != 1 {
		t.Errorf("proxy got %d requests, want 1", n)
	}
	// NO_PROXY exempts the host: the name then fails to resolve.
	p, err = New(&Options{Getenv: mapEnv(map[string]string{"ANTHROPIC_API_KEY": "k",
		"ANTHROPIC_BASE_URL": "http://api.agentloop.test", "HTTP_PROXY": proxy.URL, "NO_PROXY": ".test", EnvMaxRetries: "0"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err == nil {
		t.Error("request went through despite NO_PROXY")
	}
	if n := len(proxy.requests()); n != 1 {
		t.Errorf("proxy got %d requests, want still 1", n)
	}
}
