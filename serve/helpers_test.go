package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// TestMain gives the tests a home directory of their own, so settings
// files of the machine's user do not leak in.
func TestMain(m *testing.M) {
	// Many tests run sessions in bypassPermissions, and CI runs them as
	// root, which agentloop refuses unless IS_SANDBOX is exactly 1
	// (bypass_root.go): set it to 1 for the whole run, whatever the
	// environment had (unset, or another value such as "yes"). Tests of
	// the refusal clear it themselves.
	os.Setenv("IS_SANDBOX", "1")
	home, err := os.MkdirTemp("", "agentloop-serve-test-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("CLAUDE_CONFIG_DIR")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

const (
	tokenA = "token-a"
	tokenB = "token-b"
)

// env is a server under test on loopback with a scripted model.
type env struct {
	t     testing.TB
	srv   *serve.Server
	http  *httptest.Server
	model *agentlooptest.Server
	store session.Store
	root  string
}

func (e *env) srvRoot() string { return e.root }

// newEnv starts a server with tenants A (tokenA) and B (tokenB); edit
// changes its Config before New.
func newEnv(t *testing.T, edit func(*serve.Config), replies ...agentlooptest.Reply) *env {
	t.Helper()
	m := agentlooptest.NewTB(t, replies...)
	e := newEnvWith(t, m, nil, edit)
	return e
}

func newEnvWith(t testing.TB, m *agentlooptest.Server, store session.Store, edit func(*serve.Config)) *env {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: m.URL,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	tenants := serve.NewMemoryTenants()
	tenants.Add(tokenA, serve.Tenant{ID: "tenant-a"})
	tenants.Add(tokenB, serve.Tenant{ID: "tenant-b"})
	if store == nil {
		store = session.NewMemoryStore()
	}
	cfg := serve.Config{Root: t.TempDir(), DataDir: t.TempDir(), Store: store, Tenants: tenants, Provider: p,
		ReplicaID: "replica-1", Base: &agentloop.Options{}}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
		hs.Close()
	})
	return &env{t: t, srv: srv, http: hs, model: m, store: store, root: cfg.Root}
}

// do sends a request and returns the status and body. body may be a
// string (sent as is) or a value (sent as JSON).
func (e *env) do(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, e.http.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must sends a request and fails the test unless the status is want; it
// decodes the body into a map.
func (e *env) must(want int, method, path, token string, body any) map[string]any {
	e.t.Helper()
	code, out := e.do(method, path, token, body)
	if code != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, code, want, out)
	}
	var m map[string]any
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			e.t.Fatalf("%s %s: body %s: %v", method, path, out, err)
		}
	}
	return m
}

// create makes a session for token and returns its id.
func (e *env) create(token string, body any) string {
	e.t.Helper()
	rec := e.must(http.StatusCreated, "POST", "/v1/sessions", token, body)
	id, _ := rec["id"].(string)
	if id == "" {
		e.t.Fatalf("created record without id: %v", rec)
	}
	return id
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID   string
	Kind string
	Data string
}

// sse is an open event stream.
type sse struct {
	t      testing.TB
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// subscribe opens the event stream of a session; lastID, when not empty,
// is sent as Last-Event-ID.
func (e *env) subscribe(id, token, lastID string) *sse {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		e.t.Fatalf("events: status %d: %s", resp.StatusCode, b)
	}
	s := &sse{t: e.t, resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Kind != "" || ev.Data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	e.t.Cleanup(s.close)
	return s
}

func (s *sse) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event, failing after 10s.
func (s *sse) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("event stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10s")
	}
	return sseEvent{}
}

// until reads events until one matches, returning all read.
func (s *sse) until(match func(sseEvent) bool) []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev := s.next()
		if testing.Verbose() {
			s.t.Logf("event %s %s %.1500s", ev.ID, ev.Kind, ev.Data)
		}
		out = append(out, ev)
		if match(ev) {
			return out
		}
	}
}

// isResult matches a message event carrying a result line.
func isResult(ev sseEvent) bool {
	return ev.Kind == "message" && strings.HasPrefix(msgType(ev), "result")
}

func kindIs(kind string) func(sseEvent) bool {
	return func(ev sseEvent) bool { return ev.Kind == kind }
}

// msgType returns the type (and subtype) of a message event's line.
func msgType(ev sseEvent) string {
	var h struct{ Type, Subtype string }
	json.Unmarshal([]byte(ev.Data), &h)
	if h.Subtype != "" {
		return h.Type + "/" + h.Subtype
	}
	return h.Type
}

// waitState polls GET until the session's state is want.
func (e *env) waitState(id, token, want string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec := e.must(http.StatusOK, "GET", "/v1/sessions/"+id, token, nil)
		if rec["state"] == want {
			return rec
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("session %s state %v, want %s", id, rec["state"], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
