package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
)

//go:embed webfetch.md
var webFetchDescription string

const webFetchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "url": {"description": "The address of the page to fetch: a full http or https URL.", "type": "string"},
    "prompt": {"description": "What to find out from the page: the question to answer or the information to extract.", "type": "string"},
    "offset": {"description": "Character offset in the page's text to start from. Use it only when an earlier call said the page continues, with the offset it gave.", "type": "integer"}
  },
  "required": ["url", "prompt"],
  "additionalProperties": false
}`

// WebFetch defaults; see [WebFetchOptions].
const (
	WebFetchDefaultModel        = "haiku"
	WebFetchDefaultTimeout      = 30 * time.Second
	WebFetchDefaultMaxBytes     = 10 << 20
	WebFetchDefaultMaxRedirects = 10
	WebFetchDefaultMaxChars     = 100_000
	WebFetchDefaultCacheTTL     = 15 * time.Minute
	WebFetchDefaultUserAgent    = "Claude-User (agentloop WebFetch)"
	webFetchMaxURLLength        = 2000
	webFetchMaxTokens           = 4096
)

// WebFetchOptions configure the WebFetch tool. The zero value of every field
// means its default.
type WebFetchOptions struct {
	// Model is the model that applies the prompt to the page, as an id or
	// an alias (default "haiku", a small fast model). It is called through
	// the session's provider (tool.Env.Provider).
	Model string
	// Timeout limits the fetch of one page, redirects included (default
	// 30 s). The model call that follows is not counted.
	Timeout time.Duration
	// MaxBytes is the largest response body accepted (default 10 MB).
	MaxBytes int64
	// MaxRedirects is how many redirects within the same host are followed
	// (default 10). Redirects to another host are never followed.
	MaxRedirects int
	// MaxChars is how many characters of the page's text are given to the
	// model in one call (default 100,000). Longer pages are read in parts
	// with the offset parameter.
	MaxChars int
	// CacheTTL is how long a fetched page is reused for the same URL
	// (default 15 minutes); negative disables the cache. The cache is shared
	// by every WebFetch tool of the process.
	CacheTTL time.Duration
	// Client sends the requests; its CheckRedirect is not used, since the
	// tool follows redirects itself. Nil: a client of the tool's own.
	Client *http.Client
	// UserAgent is the User-Agent header (default
	// WebFetchDefaultUserAgent).
	UserAgent string
}

func (o WebFetchOptions) withDefaults() WebFetchOptions {
	if o.Model == "" {
		o.Model = WebFetchDefaultModel
	}
	o.Model = pricing.Resolve(o.Model)
	if o.Timeout <= 0 {
		o.Timeout = WebFetchDefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = WebFetchDefaultMaxBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = WebFetchDefaultMaxRedirects
	}
	if o.MaxChars <= 0 {
		o.MaxChars = WebFetchDefaultMaxChars
	}
	if o.CacheTTL == 0 {
		o.CacheTTL = WebFetchDefaultCacheTTL
	}
	if o.UserAgent == "" {
		o.UserAgent = WebFetchDefaultUserAgent
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	c := *o.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.Client = &c
	return o
}

type webFetchInput struct {
	URL    string   `json:"url"`
	Prompt string   `json:"prompt"`
	Offset *float64 `json:"offset,omitempty"`
}

// WebFetchResult is the tool_use_result of a WebFetch call.
type WebFetchResult struct {
	// Bytes is the size of the body fetched (of the redirect notice when
	// the page moved to another host).
	Bytes int `json:"bytes"`
	// Code and CodeText are the HTTP status of the last response.
	Code     int    `json:"code"`
	CodeText string `json:"codeText"`
	// Result is the text the model got.
	Result     string `json:"result"`
	DurationMs int64  `json:"durationMs"`
	// URL is the URL as the model gave it.
	URL string `json:"url"`
}

// WebFetch returns the WebFetch tool with the default options: it fetches a
// web page, turns HTML into Markdown and has a small model apply the
// model's prompt to it. See [WebFetchWith].
func WebFetch() tool.Tool { return WebFetchWith(nil) }

// WebFetchWith returns the WebFetch tool configured by opts (nil for the
// defaults).
//
// A page is fetched with a GET request. http URLs are upgraded to https,
// except for loopback hosts (localhost, 127.0.0.0/8, ::1), which are fetched
// as given so that local servers can be reached. Redirects within the same
// host (ignoring a "www." prefix) are followed; a redirect to another host
// is not followed but reported to the model, which may fetch the new URL
// itself. HTML is converted to Markdown, other text is used as it is, and
// binary content is refused. The page's text (up to MaxChars characters from
// offset) and the prompt then go to the configured small model through the
// session's provider; its answer is the result. Without a provider, the
// text itself is returned. Pages are cached for CacheTTL per URL.
func WebFetchWith(opts *WebFetchOptions) tool.Tool {
	var o WebFetchOptions
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return tool.New("WebFetch", webFetchDescription,
		func(ctx context.Context, in webFetchInput, call *tool.Call) (tool.Result, error) {
			return runWebFetch(ctx, o, in, call)
		},
		&tool.Options{ReadOnly: true, Schema: json.RawMessage(webFetchSchema)})
}

func runWebFetch(ctx context.Context, o WebFetchOptions, in webFetchInput, call *tool.Call) (tool.Result, error) {
	start := time.Now()
	target, err := webFetchTarget(in.URL)
	if err != nil {
		return tool.Error(err.Error()), nil
	}
	offset := 0
	if in.Offset != nil {
		if *in.Offset < 0 {
			return tool.Error("offset must be 0 or more."), nil
		}
		offset = int(*in.Offset)
	}

	page, ok := webFetchPages.get(target.String())
	if !ok {
		var moved *webFetchMoved
		page, moved, err = webFetchPage(ctx, o, target)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Error(err.Error()), nil
		}
		if moved != nil {
			msg := moved.message(in.URL, in.Prompt)
			r := tool.Text(msg)
			r.Structured = WebFetchResult{
				Bytes: len(msg), Code: moved.code, CodeText: http.StatusText(moved.code),
				Result: msg, DurationMs: time.Since(start).Milliseconds(), URL: in.URL,
			}
			return r, nil
		}
		if o.CacheTTL > 0 {
			webFetchPages.put(target.String(), page, o.CacheTTL)
		}
	}

	text, next, total, err := webFetchWindow(page.text, offset, o.MaxChars)
	if err != nil {
		return tool.Error(err.Error()), nil
	}
	var result string
	if strings.TrimSpace(page.text) == "" {
		result = fmt.Sprintf("The page %s has no text content.", in.URL)
	} else if p := call.Env.Provider; p != nil {
		result, err = webFetchApply(ctx, p, o.Model, in.URL, in.Prompt, text, offset, total)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Error(fmt.Sprintf("Fetched %s, but the model could not apply the prompt to it: %v", in.URL, err)), nil
		}
	} else {
		result = text + "\n\n[No model is available in this session to apply the prompt, so this is the page's text itself.]"
	}
	if next > 0 {
		result += fmt.Sprintf("\n\n[This covered characters %d to %d of the page's %d. For the rest, call WebFetch again with the same url and offset %d.]", offset, next, total, next)
	}
	r := tool.Text(result)
	r.Structured = WebFetchResult{
		Bytes: page.bytes, Code: page.code, CodeText: http.StatusText(page.code),
		Result: result, DurationMs: time.Since(start).Milliseconds(), URL: in.URL,
	}
	return r, nil
}

// webFetchWindow returns the characters of text from offset, at most max of
// them, with the offset where the rest starts (0 when nothing is left) and
// the text's length in characters.
func webFetchWindow(text string, offset, max int) (window string, next, total int, err error) {
	total = utf8.RuneCountInString(text)
	if offset > 0 && offset >= total {
		return "", 0, total, fmt.Errorf("offset %d is past the end of the page, which has %d characters.", offset, total)
	}
	b := 0
	for i := 0; i < offset; i++ {
		_, n := utf8.DecodeRuneInString(text[b:])
		b += n
	}
	e := b
	n := 0
	for e < len(text) && n < max {
		_, sz := utf8.DecodeRuneInString(text[e:])
		e += sz
		n++
	}
	if e < len(text) {
		next = offset + n
	}
	return text[b:e], next, total, nil
}

// webFetchApply asks the model to apply prompt to the page's text.
func webFetchApply(ctx context.Context, p model.Provider, modelID, url, prompt, text string, offset, total int) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Below is the text of the web page %s, converted to Markdown", url)
	if offset > 0 || utf8.RuneCountInString(text) < total {
		fmt.Fprintf(&b, " (only part of it, starting at character %d of %d)", offset, total)
	}
	b.WriteString(".\n\n<page>\n")
	b.WriteString(text)
	b.WriteString("\n</page>\n\nRequest about this page:\n")
	b.WriteString(prompt)
	b.WriteString("\n\nAnswer the request from the page's text alone, concisely. " +
		"If the page does not contain what is asked, say so rather than guess. " +
		"Quote only short passages, and never reproduce long stretches of the page word for word.")
	resp, err := p.Stream(ctx, &model.Request{
		Model:     modelID,
		MaxTokens: webFetchMaxTokens,
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(b.String())}}},
	}, model.NopHandler{})
	if err != nil {
		return "", err
	}
	out := strings.TrimSpace(resp.Text())
	if out == "" {
		return "", errors.New("the model's answer was empty")
	}
	return out, nil
}
