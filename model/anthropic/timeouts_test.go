package anthropic

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// realProvider returns a provider for url with the real clock, no jitter and
// a recording sleep that does not wait, after applying edit.
func realProvider(t *testing.T, url string, edit func(*Options)) (*Provider, *sleeper) {
	t.Helper()
	s := &sleeper{}
	o := &Options{APIKey: "sk-test", BaseURL: url, Sleep: s.Sleep, Jitter: func() float64 { return 0 }}
	if edit != nil {
		edit(o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// bounded returns a context that ends after 10 s, so that a test whose
// timeouts do not work fails instead of hanging.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// timeoutOf returns the *TimeoutError err wraps, or fails the test.
func timeoutOf(t *testing.T, err error) *TimeoutError {
	t.Helper()
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v does not wrap a *TimeoutError", err)
	}
	return te
}

// A server that never answers, or sends headers and nothing more, is cut by
// the first-byte timeout on every attempt, and the call ends in bounded
// time with an error that says so.
func TestFirstByteTimeout(t *testing.T) {
	done := make(chan struct{})
	wait := func(r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client leave
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
	headersOnly := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		wait(r)
	}
	noHeaders := func(w http.ResponseWriter, r *http.Request) { wait(r) }
	t.Cleanup(func() { close(done) })
	for name, handler := range map[string]http.HandlerFunc{"no headers": noHeaders, "headers only": headersOnly} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(handler)
			t.Cleanup(srv.Close)
			t.Cleanup(srv.CloseClientConnections)
			p, sl := realProvider(t, srv.URL, func(o *Options) {
				o.FirstByteTimeout = 200 * time.Millisecond
				o.MaxRetries = intp(2)
			})
			h := &recorder{}
			start := time.Now()
			resp, err := p.Stream(bounded(t), simpleRequest(), h)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("Stream took %v; 3 attempts of 200ms", took)
			}
			var ae *model.APIError
			if resp != nil || !errors.As(err, &ae) {
				t.Fatalf("Stream = %v, %v; want an *APIError", resp, err)
			}
			if ae.Retries != 2 || len(h.retries) != 2 || len(sl.delays) != 2 {
				t.Errorf("Retries %d, Retry calls %d, waits %d; want 2 each", ae.Retries, len(h.retries), len(sl.delays))
			}
			te := timeoutOf(t, err)
			if te.Which != "first_byte" || te.After != 200*time.Millisecond || te.Events != 0 {
				t.Errorf("timeout = %+v", te)
			}
			if !strings.Contains(err.Error(), EnvFirstByteTimeout) {
				t.Errorf("error %q does not name %s", err, EnvFirstByteTimeout)
			}
		})
	}
}

// The watchdog's timers, in a synctest bubble: the first-byte timeout runs
// until the first event, then each event restarts the idle timeout.
func TestWatchdogTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, wd := startWatchdog(context.Background(), timeouts{firstByte: time.Second, idle: 2 * time.Second})
		time.Sleep(900 * time.Millisecond)
		wd.event() // within the first-byte timeout
		time.Sleep(1900 * time.Millisecond)
		wd.event() // within the idle timeout
		time.Sleep(1900 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("attempt cut at %v: %v", time.Now(), context.Cause(ctx))
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("attempt not cut after 2.1s of silence")
		}
		te := wd.stop()
		if diff := cmp.Diff(&TimeoutError{Which: "idle", After: 2 * time.Second, Events: 2}, te); diff != "" {
			t.Errorf("timeout (-want +got):\n%s", diff)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, wd := startWatchdog(context.Background(), timeouts{firstByte: time.Second, idle: time.Hour, request: 3 * time.Second})
		time.Sleep(999 * time.Millisecond)
		wd.event()
		for range 3 {
			time.Sleep(time.Second)
			wd.event()
		}
		synctest.Wait()
		if te := wd.stop(); ctx.Err() == nil || te == nil || te.Which != "request" {
			t.Errorf("after 4s: cut %v, timeout %+v; want the 3s request timeout", ctx.Err(), te)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Events at uneven gaps, each shorter than the idle timeout: the
		// timer, not made again for each, waits for the silence it needs.
		ctx, wd := startWatchdog(context.Background(), timeouts{firstByte: time.Second, idle: time.Second})
		for _, gap := range []time.Duration{500, 999, 10, 700, 300, 999, 1} {
			time.Sleep(gap * time.Millisecond)
			wd.event()
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if ctx.Err() != nil {
			t.Fatalf("attempt cut after 999ms of silence: %v", context.Cause(ctx))
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if te := wd.stop(); te == nil || te.Which != "idle" || te.Events != 7 {
			t.Errorf("after 1001ms of silence: timeout %+v, want idle after 7 events", te)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, wd := startWatchdog(context.Background(), timeouts{})
		time.Sleep(24 * time.Hour)
		if te := wd.stop(); te != nil {
			t.Errorf("no timeouts set, yet cut: %+v", te)
		}
		_ = ctx
	})
}

// TestWatchdogEventAllocatesNothing: after the first, an event of the
// stream makes no timer (a reply has hundreds of events).
func TestWatchdogEventAllocatesNothing(t *testing.T) {
	_, wd := startWatchdog(context.Background(), timeouts{firstByte: time.Minute, idle: time.Minute, request: time.Hour})
	defer wd.stop()
	wd.event()
	if n := testing.AllocsPerRun(100, wd.event); n != 0 {
		t.Errorf("an event allocates %v times", n)
	}
}

// A host name that does not resolve gives up after two tries.
func TestNoSuchHostGivesUpEarly(t *testing.T) {
	check := func(t *testing.T, p *Provider, sl *sleeper, resolver bool) {
		t.Helper()
		h := &recorder{}
		_, err := p.Stream(context.Background(), simpleRequest(), h)
		var dns *net.DNSError
		if (!errors.As(err, &dns) || !dns.IsNotFound) && resolver {
			t.Skipf("this machine's resolver did not answer no such host: %v", err)
		}
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Retries != 1 {
			t.Errorf("Stream error = %#v; want an APIError after 1 retry", err)
		}
		if len(h.retries) != 1 || len(sl.delays) != 1 || h.retries[0].Kind != "connection_error" {
			t.Errorf("Retry calls %+v, waits %v; want one", h.retries, sl.delays)
		}
	}
	t.Run("resolver", func(t *testing.T) {
		p, sl := realProvider(t, "http://api.agentloop-test.invalid", nil)
		check(t, p, sl, true)
	})
	t.Run("dialer", func(t *testing.T) {
		dials := 0
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials++
			return nil, &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}
		}}
		p, sl := realProvider(t, "http://api.example.invalid", func(o *Options) { o.HTTPClient = &http.Client{Transport: tr} })
		check(t, p, sl, false)
		if dials != 2 {
			t.Errorf("%d dials, want 2", dials)
		}
	})
}

// Environment variables fill unset options; bad values make New fail naming
// the variable; options win over the environment.
func TestTimeoutAndRetryEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		opts    Options
		want    timeouts
		retries int
		wantErr string // substring; "" means success
	}{
		{name: "defaults", want: timeouts{idle: DefaultStreamIdleTimeout, firstByte: DefaultFirstByteTimeout}, retries: 10},
		{
			name:    "environment",
			env:     map[string]string{EnvStreamIdleTimeout: "1500", EnvFirstByteTimeout: "2500", EnvRequestTimeout: "60000", EnvMaxRetries: "3"},
			want:    timeouts{idle: 1500 * time.Millisecond, firstByte: 2500 * time.Millisecond, request: time.Minute},
			retries: 3,
		},
		{
			name:    "options win",
			env:     map[string]string{EnvStreamIdleTimeout: "1500", EnvFirstByteTimeout: "2500", EnvRequestTimeout: "60000", EnvMaxRetries: "3"},
			opts:    Options{StreamIdleTimeout: time.Second, FirstByteTimeout: -1, RequestTimeout: 2 * time.Second, MaxRetries: intp(0)},
			want:    timeouts{idle: time.Second, request: 2 * time.Second},
			retries: 0,
		},
		{name: "retries capped at 15", env: map[string]string{EnvMaxRetries: "99"}, want: timeouts{idle: DefaultStreamIdleTimeout, firstByte: DefaultFirstByteTimeout}, retries: 15},
		{name: "idle not a number", env: map[string]string{EnvStreamIdleTimeout: "5m"}, wantErr: EnvStreamIdleTimeout + `="5m"`},
		{name: "first byte zero", env: map[string]string{EnvFirstByteTimeout: "0"}, wantErr: EnvFirstByteTimeout},
		{name: "request negative", env: map[string]string{EnvRequestTimeout: "-5"}, wantErr: EnvRequestTimeout},
		{name: "retries not a number", env: map[string]string{EnvMaxRetries: "ten"}, wantErr: EnvMaxRetries + `="ten"`},
		{name: "retries negative", env: map[string]string{EnvMaxRetries: "-1"}, wantErr: EnvMaxRetries},
		{name: "bad env ignored when the option is set", env: map[string]string{EnvStreamIdleTimeout: "x"}, opts: Options{StreamIdleTimeout: time.Second},
			want: timeouts{idle: time.Second, firstByte: DefaultFirstByteTimeout}, retries: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{EnvStreamIdleTimeout, EnvFirstByteTimeout, EnvRequestTimeout, EnvMaxRetries} {
				t.Setenv(k, tt.env[k])
			}
			o := tt.opts
			o.APIKey = "sk-test"
			p, err := New(&o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if diff := cmp.Diff(tt.want, p.timeouts, cmp.AllowUnexported(timeouts{})); diff != "" {
				t.Errorf("timeouts (-want +got):\n%s", diff)
			}
			if p.maxRetries != tt.retries {
				t.Errorf("maxRetries = %d, want %d", p.maxRetries, tt.retries)
			}
		})
	}
}

// Duration covers every attempt, failed ones included.
func TestDurationIncludesFailedAttempts(t *testing.T) {
	f := newFakeAPI(t, errorReply(500, "api_error", "boom"), sseReply(helloStream()))
	p, _ := testProvider(t, f, nil)
	resp, err := p.Stream(context.Background(), simpleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The fake clock ticks a second a reading: first attempt start (1),
	// second attempt start (2), message_start (3), end (4).
	if resp.Duration != 3*time.Second || resp.TTFT != time.Second {
		t.Errorf("Duration %v, TTFT %v; want 3s over both attempts, TTFT 1s of the last", resp.Duration, resp.TTFT)
	}
}
