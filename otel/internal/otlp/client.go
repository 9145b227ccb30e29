package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/internal/httpretry"
)

// userAgent returns the User-Agent header of every request.
func userAgent() string { return "agentloop-otlp/1 (" + runtime.Version() + ")" }

// maxResponse bounds how much of a response body is read.
const maxResponse = 64 << 10

// client posts encoded requests to one URL, with retries.
type client struct {
	url     string
	headers map[string]string
	timeout time.Duration
	gzip    bool
	hc      *http.Client
	// what is "rejected" in a partial success: "spans" or "data points".
	items string
	// first and last delay between attempts without Retry-After.
	minBackoff, maxBackoff time.Duration
}

func newClient(cfg Config, items string) (*client, error) {
	if cfg.URL == "" {
		return nil, errors.New("otlp: no URL in the exporter's configuration")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &client{
		url: cfg.URL, headers: cfg.Headers, timeout: timeout, gzip: cfg.Gzip,
		hc:    &http.Client{Transport: tr},
		items: items, minBackoff: 250 * time.Millisecond, maxBackoff: 5 * time.Second,
	}, nil
}

// post sends body, compressed when configured, within the client's
// timeout (and ctx). It retries, with exponential backoff or after the
// server's Retry-After, on a connection error other than a refused
// connection and on 429, 502, 503 and 504, as long as the next attempt
// can start before the deadline. Any
// other non-2xx status is an error naming the status and the start of
// the response body; so is a 2xx response reporting a partial success.
func (c *client) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	backoff := c.minBackoff
	var prev error // the last attempt's failure, to report when time runs out during the next
	for attempt := 1; ; attempt++ {
		retry, wait, err := c.attempt(ctx, body)
		if ctx.Err() != nil && prev != nil && errors.Is(err, ctx.Err()) {
			// The deadline cut this attempt short: what the server said
			// last is more use than the deadline alone.
			return fmt.Errorf("%w (after %d attempts: %w)", prev, attempt, ctx.Err())
		}
		if !retry {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (after %d attempts: %w)", err, attempt, ctx.Err())
		}
		prev = err
		if wait <= 0 {
			// Full jitter over [backoff/2, backoff).
			wait = backoff/2 + rand.N(backoff/2+1)
			backoff = min(2*backoff, c.maxBackoff)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (after %d attempts; no time left for another)", err, attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (after %d attempts: %w)", err, attempt, ctx.Err())
		case <-t.C:
		}
	}
}

// attempt makes one request. retry says whether another may succeed, and
// wait is the server's Retry-After (0 when absent).
func (c *client) attempt(ctx context.Context, body []byte) (retry bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("otlp: %w", err)
	}
	req.Header.Set("User-Agent", userAgent())
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// Connection errors (reset, closed, timed out) may pass. A refused
		// connection (nothing listens there) is not retried, as the
		// official exporter does not: a program exporting to a collector
		// that is not running would otherwise wait out the whole timeout
		// when it flushes at exit. Nor is a certificate the client does
		// not trust: no retry will change it.
		var certErr *tls.CertificateVerificationError
		retry := ctx.Err() == nil && !errors.Is(err, syscall.ECONNREFUSED) && !errors.As(err, &certErr)
		return retry, 0, fmt.Errorf("otlp: POST %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
			return false, 0, c.partialSuccess(data)
		}
		return false, 0, nil
	}
	err = fmt.Errorf("otlp: POST %s: %s: %s", c.url, resp.Status, bodyStart(data))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, httpretry.After(resp.Header), err
	}
	return false, 0, err
}

// bodyStart is the start of a response body for an error message.
func bodyStart(data []byte) string {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "(empty body)"
	}
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// partialSuccess decodes an Export*ServiceResponse (partial_success = 1:
// rejected count = 1, error_message = 2) and returns an error when it
// reports rejected items or a message. A body it cannot decode is an
// error too.
func (c *client) partialSuccess(data []byte) error {
	var rejected int64
	var msg string
	err := walkFields(data, func(num pbNumber, typ pbType, v []byte, x uint64) error {
		if num != 1 || typ != pbBytesType {
			return nil
		}
		return walkFields(v, func(num pbNumber, typ pbType, v []byte, x uint64) error {
			switch {
			case num == 1 && typ == pbVarintType:
				rejected = int64(x)
			case num == 2 && typ == pbBytesType:
				msg = string(v)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("otlp: POST %s: decoding the response: %w", c.url, err)
	}
	if rejected == 0 && msg == "" {
		return nil
	}
	return fmt.Errorf("otlp: POST %s: partial success: %d %s rejected: %q", c.url, rejected, c.items, msg)
}

// walkFields calls fn with each field of the protobuf message data: its
// bytes for a length-delimited field, its value for a varint or fixed one.
func walkFields(data []byte, fn func(num pbNumber, typ pbType, v []byte, x uint64) error) error {
	for len(data) > 0 {
		num, typ, n := pbConsumeTag(data)
		if n < 0 {
			return errMalformed
		}
		data = data[n:]
		var v []byte
		var x uint64
		switch typ {
		case pbVarintType:
			x, n = pbConsumeVarint(data)
		case pbFixed64Type:
			x, n = pbConsumeFixed64(data)
		case pbFixed32Type:
			var x32 uint32
			x32, n = pbConsumeFixed32(data)
			x = uint64(x32)
		case pbBytesType:
			v, n = pbConsumeBytes(data)
		default:
			n = pbConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return errMalformed
		}
		data = data[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
