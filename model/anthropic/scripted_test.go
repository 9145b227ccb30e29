package anthropic_test

// The provider against agentlooptest's scripted server. These tests are
// in the external test package: agentlooptest imports this package (for
// Server.Provider), so the package's own tests cannot import it.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
)

// waits is a Sleep that records its delays and does not wait.
type waits struct {
	mu  sync.Mutex
	got []time.Duration
}

func (w *waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.got = append(w.got, d)
	w.mu.Unlock()
	return ctx.Err()
}

// retryLog is a Handler that records the retries.
type retryLog struct {
	model.NopHandler
	got []model.RetryInfo
}

func (r *retryLog) Retry(info model.RetryInfo) { r.got = append(r.got, info) }

// scriptedProvider returns a provider for url with the real clock, no
// jitter and a recording sleep that does not wait, after applying edit.
func scriptedProvider(t *testing.T, url string, edit func(*anthropic.Options)) (*anthropic.Provider, *waits) {
	t.Helper()
	w := &waits{}
	o := &anthropic.Options{APIKey: "sk-test", BaseURL: url, Sleep: w.Sleep, Jitter: func() float64 { return 0 }}
	if edit != nil {
		edit(o)
	}
	p, err := anthropic.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

// within10s returns a context that ends after 10 s, so that a test whose
// timeouts do not work fails instead of hanging.
func within10s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// timeoutIn returns the *anthropic.TimeoutError err wraps, or fails the test.
func timeoutIn(t *testing.T, err error) *anthropic.TimeoutError {
	t.Helper()
	var te *anthropic.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v does not wrap a *anthropic.TimeoutError", err)
	}
	return te
}

func sayHello() *model.Request {
	return &model.Request{
		Model:     "claude-opus-5-5",
		MaxTokens: 1024,
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Say hello")}}},
	}
}

func ptr(n int) *int { return &n }

// A stream that falls silent after two events is cut by the idle timeout
// and retried; the retry succeeds.
func TestStreamStallRetried(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Reply{Content: []model.Content{model.TextBlock("lost")}, Usage: model.Usage{InputTokens: 40, OutputTokens: 1}, StallAfter: 2},
		agentlooptest.Text("Second try."),
	)
	p, sl := scriptedProvider(t, srv.URL, func(o *anthropic.Options) { o.StreamIdleTimeout = 200 * time.Millisecond })
	h := &retryLog{}
	start := time.Now()
	resp, err := p.Stream(within10s(t), sayHello(), h)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Stream took %v; the idle timeout is 200ms", took)
	}
	if resp.Text() != "Second try." {
		t.Errorf("reply %q", resp.Text())
	}
	if srv.Len() != 2 || len(h.got) != 1 || len(sl.got) != 1 {
		t.Fatalf("%d requests, retries %+v, waits %v; want 2 requests, 1 retry", srv.Len(), h.got, sl.got)
	}
	ri := h.got[0]
	if ri.Kind != "connection_error" || ri.Status != 0 || ri.Attempt != 1 {
		t.Errorf("retry = %+v", ri)
	}
	te := timeoutIn(t, ri.Err)
	if diff := cmp.Diff(&anthropic.TimeoutError{Which: "idle", After: 200 * time.Millisecond, Events: 2}, te); diff != "" {
		t.Errorf("timeout (-want +got):\n%s", diff)
	}
	if !strings.Contains(ri.Err.Error(), "stalled") || !strings.Contains(ri.Err.Error(), anthropic.EnvStreamIdleTimeout) {
		t.Errorf("retry error %q does not say the stream stalled and which setting cut it", ri.Err)
	}
	if resp.FailedUsage.InputTokens != 40 {
		t.Errorf("FailedUsage = %+v, want the stalled attempt's message_start usage", resp.FailedUsage)
	}
}

// Events that keep coming, pings included, keep the idle timer from firing
// even when the whole stream lasts longer than the idle timeout.
func TestStreamIdleResetByEvents(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Reply{
		Content: []model.Content{model.TextBlock("slow but steady")}, Chunk: 4, EventDelay: 60 * time.Millisecond,
	})
	p, _ := scriptedProvider(t, srv.URL, func(o *anthropic.Options) {
		o.StreamIdleTimeout = 300 * time.Millisecond
		o.MaxRetries = ptr(0)
	})
	start := time.Now()
	resp, err := p.Stream(within10s(t), sayHello(), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatalf("stream took %v; the test needs it to outlast the idle timeout", time.Since(start))
	}
	if resp.Text() != "slow but steady" {
		t.Errorf("reply %q", resp.Text())
	}
}

// The request timeout bounds an attempt that streams steadily but too long.
func TestRequestTimeout(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Reply{
		Content: []model.Content{model.TextBlock(strings.Repeat("x", 100))}, Chunk: 1, EventDelay: 20 * time.Millisecond,
	})
	p, _ := scriptedProvider(t, srv.URL, func(o *anthropic.Options) {
		o.RequestTimeout = 300 * time.Millisecond
		o.MaxRetries = ptr(0)
	})
	start := time.Now()
	_, err := p.Stream(within10s(t), sayHello(), nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Stream took %v", took)
	}
	te := timeoutIn(t, err)
	if te.Which != "request" || te.After != 300*time.Millisecond || te.Events == 0 {
		t.Errorf("timeout = %+v", te)
	}
}

// Cancelling the caller's context is not a timeout.
func TestCancelIsNotTimeout(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Reply{Content: []model.Content{model.TextBlock("x")}, StallAfter: 1})
	p, _ := scriptedProvider(t, srv.URL, func(o *anthropic.Options) { o.StreamIdleTimeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, sayHello(), nil)
	var te *anthropic.TimeoutError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &te) {
		t.Errorf("Stream = %v; want the context's error, not a timeout", err)
	}
}

// A 401 answer is retried once, not ten times: a bad key stays bad.
func TestUnauthorizedGivesUpEarly(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Error(401, "authentication_error", "invalid x-api-key"),
		agentlooptest.Error(401, "authentication_error", "invalid x-api-key"),
	)
	p, sl := scriptedProvider(t, srv.URL, nil)
	h := &retryLog{}
	_, err := p.Stream(context.Background(), sayHello(), h)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Retries != 1 {
		t.Fatalf("Stream error = %v; want a 401 APIError after 1 retry", err)
	}
	if srv.Len() != 2 || len(h.got) != 1 || len(sl.got) != 1 {
		t.Errorf("%d requests, %d Retry calls, %d waits; want 2, 1, 1", srv.Len(), len(h.got), len(sl.got))
	}
}
