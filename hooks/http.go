package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// MaxHTTPResponseBytes caps the body of an http hook's answer; a longer
// one is a hook error.
const MaxHTTPResponseBytes = 1 << 20

// httpClient sends http hooks. Redirects are not followed: a 3xx answer
// is a non-2xx answer, reported as a hook error.
var httpClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// runHTTP posts the input JSON to an http hook's url. Its headers are
// sent with $VAR and ${VAR} expanded from the hooks' environment for the
// variables listed in allowedEnvVars (and in the managed
// httpHookAllowedEnvVars, when Config.Policy has it); any other variable
// expands to nothing. A 2xx answer's body is read as a command hook's stdout is
// when it exits 0 (a JSON object is the hook's Output, other text is
// plain output); any other status, a network error or invalid JSON is a
// non-blocking hook error, and a timeout is a timeout. Notice.ExitCode is
// 0 for a 2xx answer, the HTTP status for another, -1 without an answer.
func (d *Dispatcher) runHTTP(ctx context.Context, r *run, body []byte) Notice {
	hctx, cancel := r.context(ctx)
	defer cancel()
	fail := func(err error) Notice {
		if r.ended(ctx, hctx) {
			return Notice{Stderr: r.lateText(), ExitCode: -1, Outcome: Cancelled}
		}
		r.failure = fmt.Sprintf("%s: %v", r.label(), err)
		return Notice{Stderr: err.Error(), ExitCode: -1, Outcome: Failed}
	}
	req, err := http.NewRequestWithContext(hctx, http.MethodPost, r.h.entry.URL, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for name, v := range r.h.entry.Headers {
		req.Header.Set(name, d.expandHeader(v, r.h.envVars))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPResponseBytes+1))
	if err != nil {
		return fail(fmt.Errorf("reading the answer: %w", err))
	}
	if len(data) > MaxHTTPResponseBytes {
		return fail(fmt.Errorf("the answer is longer than %d bytes", MaxHTTPResponseBytes))
	}
	n := Notice{Output: string(data), Stdout: string(data)}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(data))
		if msg == "" {
			msg = "empty body"
		}
		r.failure = fmt.Sprintf("%s: HTTP status %s: %s", r.label(), resp.Status, clip(msg, 200))
		n.ExitCode, n.Outcome = resp.StatusCode, Failed
		return n
	}
	readStdout(r, &n, "the body")
	return n
}

// expandHeader expands $VAR and ${VAR} in a header value: a variable in
// allowed gets its value from the hooks' environment, any other nothing.
func (d *Dispatcher) expandHeader(v string, allowed []string) string {
	return os.Expand(v, func(name string) string {
		if !slices.Contains(allowed, name) {
			return ""
		}
		return d.getenv(name)
	})
}
