package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
)

// webFetchDoc is a fetched page, as cached.
type webFetchDoc struct {
	text  string // Markdown for HTML, else the body as text
	bytes int    // size of the body
	code  int    // HTTP status
}

// webFetchMoved is a redirect to another host, which is reported instead
// of followed.
type webFetchMoved struct {
	code int
	from string // the URL that answered with the redirect
	to   string // where it points
}

func (m *webFetchMoved) message(original, prompt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The page was not fetched: %s redirects to a different host (HTTP %d %s), and WebFetch does not follow redirects across hosts.\n\n",
		original, m.code, http.StatusText(m.code))
	if m.from != original {
		fmt.Fprintf(&b, "Redirecting URL: %s\n", m.from)
	}
	fmt.Fprintf(&b, "New location: %s\n\n", m.to)
	fmt.Fprintf(&b, "If you still want the page, call WebFetch again with url %q and the same prompt:\n%s", m.to, prompt)
	return b.String()
}

// webFetchTarget checks the URL the model gave and returns the one to fetch:
// http is upgraded to https, except for loopback hosts.
func webFetchTarget(raw string) (*url.URL, error) {
	if len(raw) > webFetchMaxURLLength {
		return nil, fmt.Errorf("Invalid URL: it is %d characters long; WebFetch accepts at most %d.", len(raw), webFetchMaxURLLength)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("Invalid URL %q: %v", raw, errors.Unwrap(err))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("Invalid URL %q: only http and https URLs can be fetched.", raw)
	case u.Hostname() == "":
		return nil, fmt.Errorf("Invalid URL %q: it has no host.", raw)
	case u.User != nil:
		return nil, fmt.Errorf("Invalid URL %q: URLs with a user name or password are not fetched.", raw)
	}
	if u.Scheme == "http" && !webFetchLoopback(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment = ""
	u.RawFragment = ""
	return u, nil
}

// webFetchLoopback reports whether host names this machine.
func webFetchLoopback(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// webFetchSameSite reports whether a redirect from a to b may be followed:
// same scheme, same port, and the same host up to a leading "www.".
func webFetchSameSite(a, b *url.URL) bool {
	if a.Scheme != b.Scheme || a.Port() != b.Port() {
		return false
	}
	strip := func(h string) string { return strings.TrimPrefix(strings.ToLower(h), "www.") }
	return strip(a.Hostname()) == strip(b.Hostname())
}

// webFetchPage fetches u, following redirects within the site. It returns
// the page, or the redirect to another host, or an error whose text is for
// the model.
func webFetchPage(ctx context.Context, o WebFetchOptions, u *url.URL) (*webFetchDoc, *webFetchMoved, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	shown := u.String()
	for hops := 0; ; hops++ {
		doc, next, err := webFetchOnce(ctx, o, u)
		if err != nil {
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return nil, nil, fmt.Errorf("Fetching %s timed out after %s.", shown, o.Timeout)
			}
			return nil, nil, err
		}
		if next == nil {
			return doc, nil, nil
		}
		if !webFetchSameSite(u, next.url) {
			return nil, &webFetchMoved{code: next.code, from: u.String(), to: next.url.String()}, nil
		}
		if hops >= o.MaxRedirects {
			return nil, nil, fmt.Errorf("Fetching %s failed: more than %d redirects.", shown, o.MaxRedirects)
		}
		u = next.url
	}
}

type webFetchRedirect struct {
	code int
	url  *url.URL
}

func webFetchOnce(ctx context.Context, o WebFetchOptions, u *url.URL) (*webFetchDoc, *webFetchRedirect, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("Invalid URL %s: %v", u, err)
	}
	req.Header.Set("User-Agent", o.UserAgent)
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/*;q=0.8, */*;q=0.5")
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("Fetching %s failed: %v", u, webFetchCause(err))
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, nil, fmt.Errorf("Fetching %s failed: the server answered %d %s without saying where to.", u, resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		next, err := u.Parse(loc)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
			return nil, nil, fmt.Errorf("Fetching %s failed: it redirects to %q, which is not a web URL.", u, loc)
		}
		return nil, &webFetchRedirect{code: resp.StatusCode, url: next}, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, fmt.Errorf("Fetching %s failed: the server answered %d %s.", u, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.ContentLength > o.MaxBytes {
		return nil, nil, webFetchTooLarge(u, o.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, o.MaxBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("Fetching %s failed while reading the page: %v", u, webFetchCause(err))
	}
	if int64(len(body)) > o.MaxBytes {
		return nil, nil, webFetchTooLarge(u, o.MaxBytes)
	}
	text, err := webFetchText(ctx, u, resp.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, nil, err
	}
	return &webFetchDoc{text: text, bytes: len(body), code: resp.StatusCode}, nil, nil
}

func webFetchTooLarge(u *url.URL, max int64) error {
	return fmt.Errorf("Fetching %s failed: the page is larger than %s, the most WebFetch reads.", u, webFetchSize(max))
}

func webFetchSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MB"
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return strconv.FormatInt(n>>10, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// webFetchCause strips the "Get <url>:" wrapping of client errors.
func webFetchCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// webFetchText turns a body into text: HTML to Markdown, other text as it
// is. Binary content is refused.
func webFetchText(ctx context.Context, u *url.URL, contentType string, body []byte) (string, error) {
	media, _, err := mime.ParseMediaType(contentType)
	if contentType == "" || err != nil {
		media, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	media = strings.ToLower(media)
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		md, err := htmltomarkdown.ConvertString(strings.ToValidUTF8(string(body), "\uFFFD"),
			converter.WithDomain(u.Scheme+"://"+u.Host), converter.WithContext(ctx))
		if err != nil {
			return "", fmt.Errorf("Fetching %s failed: the HTML could not be converted to text: %v", u, err)
		}
		return md, nil
	case webFetchTextual(media):
		if webFetchBinary(body) {
			return "", fmt.Errorf("Fetching %s failed: it is said to be %s but holds binary data.", u, media)
		}
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return "", fmt.Errorf("Fetching %s failed: its content is %s, not text; WebFetch reads only web pages and other text.", u, media)
}

func webFetchTextual(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/javascript",
		"application/ecmascript", "application/x-javascript", "application/x-sh",
		"application/x-yaml", "application/yaml", "application/toml",
		"application/x-ndjson", "application/sql", "application/graphql":
		return true
	}
	return false
}

// webFetchBinary reports whether body looks like binary data: a NUL byte,
// or mostly invalid UTF-8, in its first few kilobytes.
func webFetchBinary(body []byte) bool {
	head := body[:min(len(body), 8192)]
	bad := 0
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == 0 {
			return true
		}
		if r == utf8.RuneError && n == 1 && len(head) >= utf8.UTFMax {
			bad++
		}
		head = head[n:]
	}
	return bad > 64
}

// webFetchCache keeps fetched pages for a while, per URL. It is bounded by
// the number of entries and their total size; the oldest entries go first.
type webFetchCache struct {
	mu      sync.Mutex
	entries map[string]*webFetchEntry // made by the first put
	order   []string                  // insertion order, oldest first
	size    int
	// bounds: most entries, most characters of text in all
	maxEntries, maxSize int
}

type webFetchEntry struct {
	doc     *webFetchDoc
	expires time.Time
}

// Cache bounds.
const (
	webFetchCacheEntries = 128
	webFetchCacheBytes   = 50 << 20
)

// webFetchPages is the process-wide page cache: static data, which costs
// the process nothing before its first fetch.
var webFetchPages = webFetchCache{maxEntries: webFetchCacheEntries, maxSize: webFetchCacheBytes}

func newWebFetchCache(entries, size int) *webFetchCache {
	return &webFetchCache{maxEntries: entries, maxSize: size}
}

func (c *webFetchCache) get(key string) (*webFetchDoc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	if time.Now().After(e.expires) {
		c.remove(key)
		return nil, false
	}
	return e.doc, true
}

func (c *webFetchCache) put(key string, doc *webFetchDoc, ttl time.Duration) {
	if len(doc.text) > c.maxSize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	if c.entries == nil {
		c.entries = map[string]*webFetchEntry{}
	}
	c.entries[key] = &webFetchEntry{doc: doc, expires: time.Now().Add(ttl)}
	c.order = append(c.order, key)
	c.size += len(doc.text)
	for len(c.entries) > c.maxEntries || c.size > c.maxSize {
		c.remove(c.order[0])
	}
}

// remove drops key; the caller holds the lock.
func (c *webFetchCache) remove(key string) {
	e, ok := c.entries[key]
	if !ok {
		return
	}
	delete(c.entries, key)
	c.size -= len(e.doc.text)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
