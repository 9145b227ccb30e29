// Package serve hosts agentloop sessions over HTTP (`agentloop serve`):
// create sessions, send them messages, follow their messages as
// Server-Sent Events in the stream-json shapes, answer their permission
// requests, interrupt, fork, list, rename and delete them. See
// docs/serve.md for the API and docs/openapi.yaml for its schema.
//
// Sessions live in a session.Store, so that several replicas sharing one
// (PostgreSQL) serve any session: a session runs on one replica at a time,
// the one holding its lease in the store; another replica answers a
// message with 409 naming the holder until the lease is released, then
// takes the session over, and passes interrupts, mode changes,
// permission answers and deletes to the holder through the store
// (control.go). Where the turns run is the Backend's business: in the
// replica (InProcess, the default), or in a durable engine that outlives
// it (package temporal's ServeBackend). Every session's commands run in
// the kernel sandbox, confined to its tenant (sandbox.go).
package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/serve/web"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// DefaultSettingSources are the settings sources of a session when
// Config.SettingSources is nil: the server user's own files only, none a
// tenant can write.
var DefaultSettingSources = []settings.SettingSource{settings.User}

// TenantWritableSources returns those of sources that read files from a
// session's working directory, which its tenant writes (project, local).
func TenantWritableSources(sources []settings.SettingSource) []settings.SettingSource {
	var out []settings.SettingSource
	for _, s := range sources {
		if s == settings.Project || s == settings.Local {
			out = append(out, s)
		}
	}
	return out
}

// Config configures a Server. Root is required, and one of Store or
// DataDir.
type Config struct {
	// Root is the directory under which sessions get their working
	// directories: Root/t-<tenant hash>/<cwd>. A session never works
	// outside it.
	Root string
	// DataDir holds the replica's local data: the file store when Store
	// is nil, and scratch configuration directories of open sessions.
	// Empty means a directory under os.TempDir.
	DataDir string
	// Store keeps the sessions (transcripts, records, event logs,
	// leases). Nil means a session.FileStore under DataDir/store, which
	// serves one machine only.
	Store session.Store
	// Tenants maps bearer tokens to tenants. Required.
	Tenants TenantStore
	// ReplicaID names this replica in leases and 409 answers; empty means
	// the host name and a random suffix.
	ReplicaID string
	// LeaseTTL is how long a session's lease holds without renewal (it is
	// renewed every third of it while the session is open here); 0 means
	// session.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// IdleRelease is how long an idle session keeps its client and lease
	// on this replica before it is closed and released for others; 0
	// means 30s.
	IdleRelease time.Duration
	// MaxBodyBytes bounds request bodies (413 above it); 0 means 1 MiB.
	MaxBodyBytes int64
	// CORSOrigins are the origins allowed to call the API from a browser
	// ("*" for any); empty turns CORS off (no CORS headers at all).
	CORSOrigins []string
	// PingInterval is the period of the ": ping" keep-alive comments of
	// event streams; 0 means 15s.
	PingInterval time.Duration
	// PollInterval is how often an event stream of a session open on
	// another replica reads new events from the store; 0 means 1s.
	PollInterval time.Duration
	// MaxEvents bounds each open session's in-memory event log; older
	// events are read back from the store. 0 means 10000.
	MaxEvents int
	// Provider, when set, replaces the model provider of every session
	// (tests use it with agentlooptest). Base.Provider does the same.
	Provider model.Provider
	// Base are options every session starts from (settings, sandbox,
	// environment, API tuning...); the request's fields and the server's
	// own (Cwd, SessionStore, ConfigDir, CanUseTool, Resume, SessionID,
	// Logger, Observer, SettingSources) are set over a copy. Its
	// SettingSources must be nil: use SettingSources below.
	Base *agentloop.Options
	// SettingSources selects the settings files every session loads, as
	// agentloop.Options.SettingSources does, with another default: nil
	// means DefaultSettingSources (the server user's own
	// ~/.claude/settings.json, CLAUDE.md, agents, skills and commands:
	// operator configuration). The project and local sources read
	// .claude/settings.json, .claude/settings.local.json, CLAUDE.md and
	// the .claude agents, skills and commands of the session's working
	// directory, which its tenant writes. Their command hooks run only
	// inside the tenant's sandbox, and only when the operator's deny
	// rules do not cover their command (agentloop.Options.
	// ConfineProjectConfig); they can still add allow rules and
	// instructions for the tenant's own session, so name them only for
	// tenants trusted with that. An empty non-nil slice loads none. The
	// managed policy and Base.Settings always load; a .mcp.json is never
	// read.
	SettingSources []settings.SettingSource
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Observer, when set, is given to every session (see package otel).
	Observer observe.Observer
	// AllowModes are the permission modes tenants may ask for beyond
	// DefaultAllowedModes (bypassPermissions, auto); a session asking for
	// another is refused with 403.
	AllowModes []agentloop.PermissionMode
	// UnsafeNoSandbox lets the server run where the kernel cannot sandbox
	// the tenants' commands, and runs them unsandboxed (sandbox.go). Only
	// for tenants trusted with the server user's files.
	UnsafeNoSandbox bool
	// Protect are further files and directories no tenant command may
	// read (the tokens file, settings files); the root, the data
	// directory and the server user's configuration directory always are.
	Protect []string
	// Backend runs the sessions' turns; nil means InProcess. With a
	// durable backend (Backend.Durable), a drain or a lost lease lets a
	// running turn go on rather than interrupting it, and a replica whose
	// client follows the events of a running session nobody holds takes
	// it over.
	Backend Backend
}

// Server serves the API. Make it with New; its methods are safe for
// concurrent use.
type Server struct {
	cfg     Config
	store   session.Store
	backend Backend
	root    string // Root, symbolic links resolved
	dataDir string
	log     *slog.Logger
	met     metrics
	handler http.Handler

	mu      sync.Mutex
	live    map[string]*live         // open sessions by id
	opening map[string]chan struct{} // sessions being opened, closed when done
	// watchers are closed when the session of their id opens here, so
	// that a stream following a session that is not open yet switches
	// from polling the store to the live log at once (events.go).
	watchers map[string]chan struct{}
	draining atomic.Bool
	// crashed, set by tests only, makes the replica behave as a dead
	// process towards the store: no renewals, no writes (export_test.go).
	crashed atomic.Bool
	drainCh chan struct{}
	subs    atomic.Int64
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Root == "" {
		return nil, errors.New("serve: Config.Root is required")
	}
	if cfg.Tenants == nil {
		return nil, errors.New("serve: Config.Tenants is required")
	}
	if cfg.Base != nil && cfg.Base.SettingSources != nil {
		return nil, errors.New("serve: Config.Base.SettingSources is not used; set Config.SettingSources")
	}
	if cfg.SettingSources == nil {
		cfg.SettingSources = slices.Clone(DefaultSettingSources)
	}
	for _, src := range cfg.SettingSources {
		if src != settings.User && src != settings.Project && src != settings.Local {
			return nil, fmt.Errorf("serve: Config.SettingSources: unknown source %q (want user, project or local)", src)
		}
	}
	cfg.SettingSources = append([]settings.SettingSource{}, cfg.SettingSources...)
	if err := os.MkdirAll(cfg.Root, 0o755); err != nil {
		return nil, fmt.Errorf("serve: creating the session root: %w", err)
	}
	root, err := filepath.EvalSymlinks(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("serve: session root: %w", err)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("serve: session root: %w", err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(os.TempDir(), "agentloop-serve")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("serve: creating the data directory: %w", err)
	}
	if cfg.ReplicaID == "" {
		h, _ := os.Hostname()
		cfg.ReplicaID = h + "-" + uuid.NewString()[:8]
	}
	if cfg.IdleRelease <= 0 {
		cfg.IdleRelease = 30 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 15 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = 10000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, store: cfg.Store, root: root, dataDir: cfg.DataDir, log: cfg.Logger,
		live: map[string]*live{}, opening: map[string]chan struct{}{}, watchers: map[string]chan struct{}{}, drainCh: make(chan struct{})}
	if s.store == nil {
		s.store = session.NewFileStore(filepath.Join(cfg.DataDir, "store"))
	}
	if s.backend = cfg.Backend; s.backend == nil {
		s.backend = InProcess{}
	}
	if err := s.checkSandbox(); err != nil {
		return nil, err
	}
	for _, m := range cfg.AllowModes {
		if _, err := agentloop.ParsePermissionMode(string(m)); err != nil {
			return nil, fmt.Errorf("serve: Config.AllowModes: %w", err)
		}
	}
	if cfg.Base != nil {
		inline, err := inlineSettings(cfg.Base.Settings)
		if err != nil {
			return nil, err
		}
		base := *cfg.Base
		base.Settings = inline
		s.cfg.Base = &base
	}
	if _, err := s.operatorSandbox(); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// ReplicaID returns the id under which this replica holds sessions.
func (s *Server) ReplicaID() string { return s.cfg.ReplicaID }

// Handler returns the HTTP handler of the API, the health, readiness and
// metrics endpoints, and the web page (package web: web.FS, served by
// web.Handler).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	page := web.Handler()
	mux.Handle("GET /{$}", page)
	mux.Handle("GET /index.html", page)
	mux.Handle("GET /static/", page)

	api := func(pattern string, h func(w http.ResponseWriter, r *http.Request, t Tenant)) {
		mux.HandleFunc(pattern, s.authed(h))
	}
	api("POST /v1/sessions", s.handleCreate)
	api("GET /v1/sessions", s.handleList)
	api("GET /v1/sessions/{id}", s.handleGet)
	api("PATCH /v1/sessions/{id}", s.handlePatch)
	api("DELETE /v1/sessions/{id}", s.handleDelete)
	api("POST /v1/sessions/{id}/messages", s.handleMessage)
	api("POST /v1/sessions/{id}/interrupt", s.handleInterrupt)
	api("POST /v1/sessions/{id}/mode", s.handleMode)
	api("POST /v1/sessions/{id}/fork", s.handleFork)
	api("POST /v1/sessions/{id}/permissions/{request_id}", s.handlePermission)
	api("GET /v1/sessions/{id}/events", s.handleEvents)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
	return s.withCORS(s.instrument(mux))
}

// instrument logs and counts requests.
func (s *Server) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rw, r)
		d := time.Since(start)
		if !strings.HasSuffix(r.URL.Path, "/events") {
			s.met.observeRequest(rw.code, d.Seconds())
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rw.code, "duration", d)
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	// Through a ResponseController, which also finds the flusher of a
	// wrapper that only has Unwrap.
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withCORS answers CORS for the configured origins only.
func (s *Server) withCORS(h http.Handler) http.Handler {
	if len(s.cfg.CORSOrigins) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && (slices.Contains(s.cfg.CORSOrigins, "*") || slices.Contains(s.cfg.CORSOrigins, origin)) {
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Add("Vary", "Origin")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
			hd.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
			hd.Set("Access-Control-Max-Age", "600")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// authed checks the bearer token and passes on its tenant.
func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, t Tenant)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing bearer token: send Authorization: Bearer <token>")
			return
		}
		t, err := s.cfg.Tenants.Lookup(r.Context(), HashToken(strings.TrimSpace(token)))
		if errors.Is(err, ErrUnknownToken) {
			writeError(w, http.StatusUnauthorized, "unauthorized", "invalid bearer token")
			return
		}
		if err != nil {
			s.log.Error("token lookup failed", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not check the token")
			return
		}
		h(w, r, t)
	}
}

// apiError is an error answered with a status and type.
type apiError struct {
	status int
	typ    string
	msg    string
	holder string
}

func (e *apiError) Error() string { return e.msg }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]string{"type": typ, "message": msg}})
}

// fail answers err: an *apiError as it says, errNotFound as 404, anything
// else as 500 (logged, not shown).
func (s *Server) fail(w http.ResponseWriter, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		if ae.holder != "" { // a 409 no replica holds (an answered permission, a busy fork) names none
			writeJSON(w, ae.status, map[string]any{"error": map[string]string{
				"type": ae.typ, "message": ae.msg, "holder": ae.holder}})
			return
		}
		writeError(w, ae.status, ae.typ, ae.msg)
	case errors.Is(err, errNotFound):
		writeError(w, http.StatusNotFound, "not_found", "no such session")
	default:
		s.log.Error("request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "internal error; see the server log")
	}
}

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request", msg: fmt.Sprintf(format, args...)}
}

// decode reads the JSON body into v: at most MaxBodyBytes (413 above),
// one object, no unknown fields. An empty body is allowed when
// emptyOK.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) error {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	b, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{status: http.StatusRequestEntityTooLarge, typ: "too_large",
				msg: fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes)}
		}
		return badRequest("reading the request body: %v", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		if emptyOK {
			return nil
		}
		return badRequest("request body is empty; want a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if strings.HasPrefix(msg, "unknown field ") {
			return badRequest("%s in the request body", msg)
		}
		return badRequest("malformed JSON body: %s", msg)
	}
	if dec.More() {
		return badRequest("malformed JSON body: more than one JSON value")
	}
	return nil
}
