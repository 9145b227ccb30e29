package web

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	tests := []struct {
		method, path string
		status       int
		ctype        string // prefix
		body         string // substring
	}{
		{"GET", "/", 200, "text/html", `<script type="module" src="static/app.js">`},
		{"GET", "/index.html", 200, "text/html", "<title>agentloop</title>"},
		{"GET", "/static/app.js", 200, "text/javascript", "readEvents"},
		{"GET", "/static/style.css", 200, "text/css", ".perms"},
		{"HEAD", "/static/app.js", 200, "text/javascript", ""},
		{"GET", "/static/embed.go", 404, "", ""},
		{"GET", "/static/", 404, "", ""},
		{"GET", "/static/../embed.go", 404, "", ""},
		{"GET", "/app.js", 404, "", ""},
		{"GET", "/nope", 404, "", ""},
		{"POST", "/", 405, "", ""},
	}
	h := Handler()
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://x"+tt.path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d (body %q)", res.StatusCode, tt.status, body)
			}
			if tt.status != 200 {
				return
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
				t.Errorf("Content-Type = %q, want %q…", ct, tt.ctype)
			}
			if !strings.Contains(string(body), tt.body) {
				t.Errorf("body lacks %q", tt.body)
			}
			for _, k := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Cache-Control"} {
				if res.Header.Get(k) == "" {
					t.Errorf("no %s header", k)
				}
			}
		})
	}
}

// TestPageOffline checks that the page loads nothing from another origin
// (the machine it runs on may be offline) and that every asset it names is
// embedded.
func TestPageOffline(t *testing.T) {
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Find(b); m != nil {
			t.Errorf("%s names another origin: %s", name, m)
		}
	}
	idx, _ := FS.ReadFile("index.html")
	for _, m := range regexp.MustCompile(`(?:src|href)="static/([^"]+)"`).FindAllSubmatch(idx, -1) {
		if _, err := FS.Open(string(m[1])); err != nil {
			t.Errorf("index.html names static/%s, which is not embedded: %v", m[1], err)
		}
	}
}
