package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keyScript writes a helper script that prints key-N, N counting its runs
// in a file beside it, and returns the command that runs it.
func keyScript(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "key.sh")
	body := fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]q 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > %[1]q\necho \"  key-$n  \"\n",
		filepath.Join(dir, "count"))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// The helper's output is the x-api-key; a 401 runs it again once and the
// retry carries the new key.
func TestAPIKeyHelperRefreshOn401(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, errorReply(401, "authentication_error", "invalid x-api-key"), sseReply(helloStream()))
	cmd := keyScript(t)
	p, s := testProvider(t, f, func(o *Options) { o.APIKey, o.APIKeyHelper = "", cmd })
	if !p.UsesKeyHelper() {
		t.Fatal("UsesKeyHelper is false")
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	rs := f.requests()
	if len(rs) != 2 || len(s.delays) != 1 {
		t.Fatalf("%d requests, %d retries; want 2 and 1", len(rs), len(s.delays))
	}
	for i, want := range []string{"key-1", "key-2"} {
		if got := rs[i].Header.Get("X-Api-Key"); got != want {
			t.Errorf("request %d: x-api-key %q, want %q", i, got, want)
		}
	}
	// The fresh key is cached: the next call does not run the helper.
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[2].Header.Get("X-Api-Key"); got != "key-2" {
		t.Errorf("third request: x-api-key %q, want the cached key-2", got)
	}
}

// The key is fetched again once it is older than the TTL (from the
// environment here).
func TestAPIKeyHelperTTL(t *testing.T) {
	clearPlatformEnv(t)
	t.Setenv(EnvAPIKeyHelperTTL, "1500") // the fake clock moves 1 s a reading
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) { o.APIKey, o.APIKeyHelper = "", keyScript(t) })
	for range 3 {
		if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range f.requests() {
		got = append(got, r.Header.Get("X-Api-Key"))
	}
	// Each Stream reads the clock twice after the key's fetch: the key is
	// 2 s old at the next call, past the 1.5 s TTL.
	if strings.Join(got, ",") != "key-1,key-2,key-3" {
		t.Errorf("keys %v, want a new one per call", got)
	}
}

// A failing helper fails the call at once, naming apiKeyHelper and the
// command, with the helper's message; nothing is sent.
func TestAPIKeyHelperFailure(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, sseReply(helloStream()))
	cmd := "echo 'vault is sealed' >&2; exit 3"
	p, s := testProvider(t, f, func(o *Options) { o.APIKey, o.APIKeyHelper = "", cmd })
	_, err := p.Stream(context.Background(), simpleRequest(), nil)
	var he *APIKeyHelperError
	if !errors.As(err, &he) || he.Command != cmd {
		t.Fatalf("err = %v, want an APIKeyHelperError for the command", err)
	}
	for _, want := range []string{"apiKeyHelper", "vault is sealed", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if n := len(f.requests()); n != 0 || len(s.delays) != 0 {
		t.Errorf("%d requests, %d retries; want none", n, len(s.delays))
	}
}

// An explicit key wins over the helper, which then never runs.
func TestAPIKeyHelperLosesToKey(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) { o.APIKeyHelper = "exit 1" })
	if p.UsesKeyHelper() {
		t.Error("UsesKeyHelper with an APIKey")
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Header.Get("X-Api-Key"); got != "sk-test" {
		t.Errorf("x-api-key %q", got)
	}
}

// APIKeyFunc is a helper in Go; CountTokens uses its key too.
func TestAPIKeyFunc(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"input_tokens":12}`))
	})
	calls := 0
	p, _ := testProvider(t, f, func(o *Options) {
		o.APIKey = ""
		o.APIKeyTTL = time.Hour
		o.APIKeyFunc = func(context.Context) (string, error) { calls++; return "func-key", nil }
	})
	for range 2 {
		if _, err := p.CountTokens(context.Background(), simpleRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("APIKeyFunc called %d times, want 1", calls)
	}
	if got := f.requests()[1].Header.Get("X-Api-Key"); got != "func-key" {
		t.Errorf("x-api-key %q", got)
	}
}
