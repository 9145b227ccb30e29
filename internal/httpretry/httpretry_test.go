package httpretry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		name     string
		h        http.Header
		min, max time.Duration
	}{
		{"none", http.Header{}, 0, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, 3 * time.Second},
		{"fraction", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"3"}}, 250 * time.Millisecond, 250 * time.Millisecond},
		{"bad milliseconds, seconds used", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second, 2 * time.Second},
		{"date", http.Header{"Retry-After": {future}}, 80 * time.Second, 91 * time.Second},
		{"past date", http.Header{"Retry-After": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, 0, 0},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, 0},
		{"negative", http.Header{"Retry-After": {"-1"}}, 0, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, 0},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, 0, 0},
		{"over a day", http.Header{"Retry-After": {"1e10"}}, 0, 0},
		{"milliseconds over a day", http.Header{"Retry-After-Ms": {"1e12"}}, 0, 0},
	} {
		if d := After(c.h); d < c.min || d > c.max {
			t.Errorf("%s: After = %v, want %v to %v", c.name, d, c.min, c.max)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n, base := range map[int]time.Duration{0: 500 * time.Millisecond, 1: 500 * time.Millisecond, 3: 2 * time.Second, 7: 32 * time.Second, 8: 32 * time.Second, 1000: 32 * time.Second} {
		if d := Backoff(n, 0, 0); d != base {
			t.Errorf("retry %d without jitter waits %v, want %v", n, d, base)
		}
		if d := Backoff(n, 0, 0.999); d < base || d > base+base/4 {
			t.Errorf("retry %d waits %v, want %v plus up to 25%%", n, d, base)
		}
	}
	if d := Backoff(2, 0, 7); d != time.Second {
		t.Errorf("jitter out of range: %v, want 1s", d)
	}
	if d := Backoff(2, 3*time.Second, 0.5); d != 3*time.Second {
		t.Errorf("the server's wait: %v, want 3s", d)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sleep: %v", err)
	}
}
