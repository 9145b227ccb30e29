package anthropic

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedTransportSettings shows that providers without an HTTPClient
// share one client whose transport keeps many idle connections per host
// and still negotiates HTTP/2.
func TestSharedTransportSettings(t *testing.T) {
	c := defaultHTTPClient()
	if c != defaultHTTPClient() {
		t.Fatal("each call made a new client; providers would not share connections")
	}
	tr, ok := c.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport %T, want *http.Transport", c.Transport)
	}
	if tr.MaxIdleConnsPerHost != MaxIdleConnsPerHost || tr.MaxIdleConns < MaxIdleConnsPerHost {
		t.Errorf("MaxIdleConnsPerHost %d, MaxIdleConns %d; want %d and at least as many", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, MaxIdleConnsPerHost)
	}
	if !tr.ForceAttemptHTTP2 || tr.Proxy == nil {
		t.Errorf("ForceAttemptHTTP2 %v, Proxy set %v; want the default transport's", tr.ForceAttemptHTTP2, tr.Proxy != nil)
	}
}

// TestConnectionsReusedAcrossProviders sends a wave of concurrent requests
// through one provider and a second wave through another: the second wave
// must find the first wave's connections idle and open none.
func TestConnectionsReusedAcrossProviders(t *testing.T) {
	const wave = 16
	var opened atomic.Int32
	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold every request until the whole wave is in flight, so the
		// wave needs wave connections at once.
		mu.Lock()
		arrived++
		if arrived%wave == 0 {
			close(release)
		}
		ch := release
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(helloStream()))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	send := func(p *Provider) {
		var wg sync.WaitGroup
		for range wave {
			wg.Go(func() {
				if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	for i := range 2 {
		mu.Lock()
		release = make(chan struct{})
		mu.Unlock()
		p, err := New(&Options{APIKey: "sk-test", BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		send(p)
		if i == 0 && opened.Load() != wave {
			t.Fatalf("the first wave opened %d connections, want %d (the test needs them all at once)", opened.Load(), wave)
		}
	}
	if n := opened.Load(); n != wave {
		t.Errorf("%d connections opened for two waves of %d through two providers; want the second wave to reuse the first's", n, wave)
	}
}
