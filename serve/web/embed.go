// Package web holds the static web page of `agentloop serve`: index.html,
// app.js (a plain ES module, no build step) and style.css, embedded in the
// binary so the page works offline.
//
// The page expects to be served with index.html at the mount point ("/")
// and its assets under "static/" beside it ("/static/app.js",
// "/static/style.css"); [Handler] does exactly that. It talks to the /v1
// API relative to its own folder, with a bearer token the user types and
// the page keeps in sessionStorage, so the page itself needs no auth.
package web

import (
	"bytes"
	"embed"
	"net/http"
	"strings"
	"time"
)

// FS holds the page's files at its root: index.html, app.js, style.css.
//
//go:embed index.html app.js style.css
var FS embed.FS

// Handler serves the page: GET or HEAD of "/" (and "/index.html") answers
// index.html, "/static/<name>" answers the embedded file of that name, and
// any other path a 404. Other methods get 405. Responses carry
// Cache-Control: no-cache (the files change with the binary) and
// X-Content-Type-Options: nosniff, plus a Content-Security-Policy that
// allows only the page's own scripts, styles and API calls.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := ""
		switch p := r.URL.Path; {
		case p == "/" || p == "/index.html":
			name = "index.html"
		case strings.HasPrefix(p, "/static/"):
			name = strings.TrimPrefix(p, "/static/")
		}
		b, err := FS.ReadFile(name)
		if name == "" || strings.Contains(name, "/") || err != nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", csp)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	})
}

// csp allows the page's own scripts, styles and API calls and nothing else.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
