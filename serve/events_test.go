package serve_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// A stream reconnected with Last-Event-ID gets the events after that id,
// without duplicates, then follows live; ?after= does the same; the
// events of a finished turn replay from the start.
func TestEventsResume(t *testing.T) {
	e := newEnv(t, nil, agentlooptest.Text("one"), agentlooptest.Text("two"))
	id := e.create(tokenA, nil)
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "first"})
	full := e.subscribe(id, tokenA, "")
	all := full.until(isResult)
	all = append(all, full.next()) // state idle

	first := e.subscribe(id, tokenA, "")
	var got []sseEvent
	for range 3 {
		got = append(got, first.next())
	}
	first.close()
	second := e.subscribe(id, tokenA, got[2].ID)
	for range len(all) - 3 {
		got = append(got, second.next())
	}
	for i := range all {
		if got[i] != all[i] {
			t.Fatalf("event %d after the reconnect = %+v, want %+v", i, got[i], all[i])
		}
	}
	for i, ev := range got {
		if ev.ID != strconv.Itoa(i+1) {
			t.Errorf("event %d has id %s, want %d", i, ev.ID, i+1)
		}
	}
	// Live after the replay, no duplicate of the replayed ones.
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "second"})
	ev := second.next()
	if want := strconv.Itoa(len(all) + 1); ev.ID != want {
		t.Errorf("first live event id %s, want %s", ev.ID, want)
	}
	second.until(isResult)

	// ?after=
	req, _ := http.NewRequest("GET", e.http.URL+"/v1/sessions/"+id+"/events?after="+strconv.Itoa(len(all)-1), nil)
	req.Header.Set("Authorization", "Bearer "+tokenA)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(b), "id: "+strconv.Itoa(len(all))+"\n") {
		t.Errorf("?after= stream starts %.80q, want event %d", b, len(all))
	}
	code, body := e.do("GET", "/v1/sessions/"+id+"/events?after=x", tokenA, nil)
	if code != 400 {
		t.Errorf("after=x: %d %s", code, body)
	}
}

// The event log replays after the session was closed on its replica
// (idle release): the events are read back from the store.
func TestEventsReplayAfterRelease(t *testing.T) {
	e := newEnv(t, func(c *serve.Config) { c.IdleRelease = 50 * time.Millisecond }, agentlooptest.Text("kept"))
	id := e.create(tokenA, nil)
	s := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "hi"})
	live := s.until(isResult)
	waitMetric(t, e, "agentloop_serve_sessions_active 0")
	again := e.subscribe(id, tokenA, "")
	for i, want := range live {
		if got := again.next(); got != want {
			t.Fatalf("replayed event %d = %+v, want %+v", i, got, want)
		}
	}
}

// ping comments keep an idle stream alive.
func TestEventsPing(t *testing.T) {
	e := newEnv(t, func(c *serve.Config) { c.PingInterval = 20 * time.Millisecond })
	id := e.create(tokenA, nil)
	req, _ := http.NewRequest("GET", e.http.URL+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tokenA)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), ": ping\n\n") {
		t.Errorf("no ping in %q", b)
	}
}

func metricsText(t *testing.T, e *env) string {
	t.Helper()
	code, b := e.do("GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	return string(b)
}

func waitMetric(t *testing.T, e *env, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(metricsText(t, e), line+"\n") {
		if time.Now().After(deadline) {
			t.Fatalf("metrics never had %q:\n%s", line, metricsText(t, e))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// healthz, readyz and metrics; Drain makes readyz 503, refuses new work,
// interrupts a turn still running at the deadline (its history stays
// usable), releases the lease and ends the event streams.
func TestHealthMetricsDrain(t *testing.T) {
	e := newEnv(t, nil,
		agentlooptest.Text("quick"),
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch stuck"}))
	e.must(200, "GET", "/healthz", "", nil)
	e.must(200, "GET", "/readyz", "", nil)
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}})
	s := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "hi"})
	s.until(isResult)
	m := metricsText(t, e)
	for _, want := range []string{
		"agentloop_serve_sessions_created_total 1\n",
		"agentloop_serve_turns_total 1\n",
		"agentloop_serve_sessions_active 1\n",
		`agentloop_serve_tokens_total{type="output"} 5` + "\n",
		"# TYPE agentloop_serve_turn_duration_seconds histogram\n",
		`agentloop_serve_turn_duration_seconds_bucket{le="+Inf"} 1` + "\n",
		"agentloop_serve_turn_duration_seconds_count 1\n",
		`agentloop_serve_http_requests_total{code="201"} 1` + "\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	// A turn stuck on a permission prompt when the drain begins.
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "stuck"})
	s.until(kindIs("permission_request"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.srv.Drain(ctx) }()
	waitFor(t, func() bool { c, _ := e.do("GET", "/readyz", "", nil); return c == 503 })
	code, body := e.do("POST", "/v1/sessions", tokenA, nil)
	if code != 503 {
		t.Errorf("create while draining: %d %s", code, body)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("Drain returned nil though a turn had to be interrupted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return")
	}
	evs := s.until(isResult)
	if r := evs[len(evs)-1].Data; !strings.Contains(r, `"is_error":true`) {
		t.Errorf("interrupted turn's result %s", r)
	}
	waitMetric(t, e, "agentloop_serve_sessions_active 0")
	e.must(200, "GET", "/healthz", "", nil)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// CORS is off by default; configured origins get the headers and
// preflights.
func TestCORS(t *testing.T) {
	off := newEnv(t, nil)
	req, _ := http.NewRequest("GET", off.http.URL+"/healthz", nil)
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("CORS off, but Allow-Origin %q", v)
	}
	on := newEnv(t, func(c *serve.Config) { c.CORSOrigins = []string{"https://app.example"} })
	req, _ = http.NewRequest("OPTIONS", on.http.URL+"/v1/sessions", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest("OPTIONS", on.http.URL+"/v1/sessions", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin got %v", resp.Header)
	}
}

// The page is served at / without auth.
func TestPage(t *testing.T) {
	e := newEnv(t, nil)
	code, body := e.do("GET", "/", "", nil)
	if code != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("GET /: %d %.100s", code, body)
	}
	if code, _ := e.do("GET", "/static/app.js", "", nil); code != 200 {
		t.Errorf("GET /static/app.js: %d", code)
	}
}

// TestEventsWakeWhenOpened checks that a stream opened before the session
// is open on the replica gets the events of its first turn as they come,
// not at the next poll of the store.
func TestEventsWakeWhenOpened(t *testing.T) {
	slow := agentlooptest.Text("Hello.")
	slow.Delay = 2 * time.Second // the result comes late; the first events must not wait for it
	e := newEnv(t, func(c *serve.Config) { c.PollInterval = time.Hour }, slow)
	id := e.create(tokenA, map[string]any{})
	ev := e.subscribe(id, tokenA, "")
	time.Sleep(50 * time.Millisecond) // the stream is waiting before the session opens
	sent := time.Now()
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "hi"})
	first := ev.next()
	if d := time.Since(sent); d > time.Second {
		t.Fatalf("first event %v came %v after the message, want it before the model's reply", first, d)
	}
	ev.until(isResult)
}

// slowEvents is a memory store whose appends of session events take
// delay: what a client sees must not run ahead of what is stored or
// counted.
type slowEvents struct {
	*session.MemoryStore
	delay time.Duration
}

func (s slowEvents) Append(ctx context.Context, key session.Key, entries []session.Entry) error {
	if key.Subpath == "events" {
		time.Sleep(s.delay)
	}
	return s.MemoryStore.Append(ctx, key, entries)
}

// A result is in the metrics by the time its line reaches a client, even
// when storing the line takes a while.
func TestResultCountedBeforeShown(t *testing.T) {
	m := agentlooptest.NewTB(t, agentlooptest.Text("quick"))
	e := newEnvWith(t, m, slowEvents{session.NewMemoryStore(), 50 * time.Millisecond}, nil)
	id := e.create(tokenA, nil)
	s := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "hi"})
	s.until(isResult)
	if m := metricsText(t, e); !strings.Contains(m, "agentloop_serve_turns_total 1\n") {
		t.Errorf("the result was shown before it was counted:\n%s", m)
	}
}
