package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

func TestURLMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, url string
		want         bool
	}{
		{"https://hooks.example.com/check", "https://hooks.example.com/check", true},
		{"https://hooks.example.com/check", "https://hooks.example.com/check2", false},
		{"https://hooks.example.com/*", "https://hooks.example.com/a/b", true},
		{"https://hooks.example.com/*", "https://hooks.example.com/", true},
		{"https://hooks.example.com/*", "https://hooks.example.com.evil.io/a", false},
		{"https://*.example.com/*", "https://a.example.com/x", true},
		{"https://*.example.com/*", "https://example.com/x", false},
		{"http://127.0.0.1:*", "http://127.0.0.1:8080", true},
		{"http://127.0.0.1:*/x", "http://127.0.0.1:8080/y", false},
		{"*", "anything", true},
		{"", "x", false},
		{"https://a.example.com/**", "https://a.example.com/", true},
	} {
		if got := urlMatch(tc.pattern, tc.url); got != tc.want {
			t.Errorf("urlMatch(%q, %q) = %v, want %v", tc.pattern, tc.url, got, tc.want)
		}
	}
}

func policy(kv ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = json.RawMessage(kv[i+1])
	}
	return m
}

// allowedHttpHookUrls, from the managed settings, keeps http hooks to
// other URLs from running; they are reported, and never called.
func TestHTTPHookURLAllowlist(t *testing.T) {
	type out struct {
		Called  int
		Ran     int
		Warning string // a part of the one warning, "" for none
	}
	for _, tc := range []struct {
		name   string
		policy func(url string) map[string]json.RawMessage
		want   out
	}{
		{"no policy", func(string) map[string]json.RawMessage { return nil }, out{1, 1, ""}},
		{"other keys only", func(string) map[string]json.RawMessage { return policy("allowManagedHooksOnly", "true") }, out{1, 1, ""}},
		{"listed exactly", func(u string) map[string]json.RawMessage { return policy(policyHTTPURLs, `["`+u+`"]`) }, out{1, 1, ""}},
		{"listed by wildcard", func(u string) map[string]json.RawMessage {
			return policy(policyHTTPURLs, `["https://hooks.example.com/*","`+u[:strings.LastIndex(u, ":")]+`:*"]`)
		}, out{1, 1, ""}},
		{"not listed", func(string) map[string]json.RawMessage {
			return policy(policyHTTPURLs, `["https://hooks.example.com/*"]`)
		}, out{0, 0, "matches no pattern of the managed setting allowedHttpHookUrls; the hook is skipped"}},
		{"empty list", func(string) map[string]json.RawMessage { return policy(policyHTTPURLs, `[]`) },
			out{0, 0, "matches no pattern of the managed setting allowedHttpHookUrls"}},
		{"not a list", func(string) map[string]json.RawMessage { return policy(policyHTTPURLs, `"*"`) },
			out{0, 0, "allowedHttpHookUrls is not a list of strings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, 200, "")
			cfg := testConfig(t.TempDir())
			cfg.Policy = tc.policy(srv.URL)
			cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "http", URL: srv.URL})
			d := mustNew(t, cfg)
			res := d.PreToolUse(context.Background(), bashCall())
			srv.mu.Lock()
			got := out{Called: len(srv.bodies), Ran: res.Ran}
			srv.mu.Unlock()
			if w := strings.Join(d.Warnings(), " | "); w != "" {
				got.Warning = w
				if tc.want.Warning != "" && strings.Contains(w, tc.want.Warning) {
					got.Warning = tc.want.Warning
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// httpHookAllowedEnvVars, from the managed settings, narrows what any
// http hook's headers may expand to the variables both it and the hook's
// allowedEnvVars list.
func TestHTTPHookEnvVarPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy map[string]json.RawMessage
		want   map[string]string
		warn   string
	}{
		{"no policy", nil, map[string]string{"X-Secret": "[s3cret]", "Authorization": "Bearer <tok>"}, ""},
		{"SECRET not listed", policy(policyHTTPEnvVars, `["TOKEN","OTHER"]`),
			map[string]string{"X-Secret": "[]", "Authorization": "Bearer <tok>"},
			"header X-Secret names $SECRET, which the managed setting httpHookAllowedEnvVars does not list; it expands to nothing"},
		{"empty list", policy(policyHTTPEnvVars, `[]`), map[string]string{"X-Secret": "[]", "Authorization": "Bearer <>"}, "httpHookAllowedEnvVars does not list"},
		{"listed but not allowed by the hook", policy(policyHTTPEnvVars, `["TOKEN","SECRET","HOME_ONLY"]`),
			map[string]string{"X-Secret": "[s3cret]", "Authorization": "Bearer <tok>"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, 200, "")
			cfg := testConfig(t.TempDir())
			cfg.Env = []string{"TOKEN=tok", "SECRET=s3cret", "HOME_ONLY=h"}
			cfg.Policy = tc.policy
			cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "http", URL: srv.URL,
				Headers:        map[string]string{"X-Secret": "[$SECRET]", "Authorization": "Bearer <${TOKEN}>"},
				AllowedEnvVars: []string{"TOKEN", "SECRET"}})
			d := mustNew(t, cfg)
			d.PreToolUse(context.Background(), bashCall())
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.heads) != 1 {
				t.Fatalf("%d requests, want 1", len(srv.heads))
			}
			got := map[string]string{}
			for k := range tc.want {
				got[k] = srv.heads[0].Get(k)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			w := strings.Join(d.Warnings(), "\n")
			if tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}
