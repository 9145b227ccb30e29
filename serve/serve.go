// Package serve hosts agentloop sessions over HTTP (`agentloop serve`):
// create sessions, send them messages, follow their messages as
// Server-Sent Events in the stream-json shapes, answer their permission
// requests, interrupt, fork, list, rename and delete them. See
// docs/serve.md for the API and docs/openapi.yaml for its schema.
//
// Sessions live in a session.Store, so that several replicas sharing one
// (PostgreSQL) serve any session: a session runs on one replica at a time,
// the one holding its lease in the store; another replica answers 409
// naming the holder until the lease is released, then takes the session
// over.
package serve

import (
	"context"
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
}

// Server serves the API. Make it with New; its methods are safe for
// concurrent use.
type Server struct {
	cfg     Config
	store   session.Store
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
	drainCh  chan struct{}
	subs     atomic.Int64
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
		if ae.holder != "" || ae.typ == "conflict" {
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

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	active, running := len(s.live), 0
	for _, l := range s.live {
		if l.currentState() != stateIdle {
			running++
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.met.write(w, active, running, int(s.subs.Load()), s.draining.Load())
}

// createRequest is the body of POST /v1/sessions.
type createRequest struct {
	Model              string                     `json:"model"`
	SystemPrompt       string                     `json:"system_prompt"`
	AppendSystemPrompt string                     `json:"append_system_prompt"`
	PermissionMode     string                     `json:"permission_mode"`
	Tools              *[]string                  `json:"tools"`
	AllowedTools       []string                   `json:"allowed_tools"`
	DisallowedTools    []string                   `json:"disallowed_tools"`
	MaxTurns           int                        `json:"max_turns"`
	MaxBudgetUSD       float64                    `json:"max_budget_usd"`
	Cwd                string                     `json:"cwd"`
	Title              string                     `json:"title"`
	Tags               []string                   `json:"tags"`
	MCPServers         map[string]json.RawMessage `json:"mcp_servers"`
	Agents             map[string]json.RawMessage `json:"agents"`
	Effort             string                     `json:"effort"`
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, t Tenant) {
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the replica is draining; try another")
		return
	}
	var req createRequest
	if err := s.decode(w, r, &req, true); err != nil {
		s.fail(w, err)
		return
	}
	opts := sessionOptions{Model: req.Model, SystemPrompt: req.SystemPrompt, AppendSystemPrompt: req.AppendSystemPrompt,
		PermissionMode: req.PermissionMode, AllowedTools: req.AllowedTools, DisallowedTools: req.DisallowedTools,
		MaxTurns: req.MaxTurns, MaxBudgetUSD: req.MaxBudgetUSD, MCPServers: req.MCPServers, Agents: req.Agents,
		Effort: req.Effort}
	if req.Tools != nil {
		opts.Tools, opts.ToolsSet = *req.Tools, true
	}
	id := uuid.NewString()
	rel := req.Cwd
	if rel == "" {
		rel = id
	}
	abs, err := s.resolveCwd(t.ID, rel)
	if err != nil {
		s.fail(w, badRequest("%v", err))
		return
	}
	// Check the options as a session would take them, before storing.
	if _, err := s.options(&opts, abs); err != nil {
		s.fail(w, badRequest("%v", err))
		return
	}
	if err := makeCwd(abs); err != nil {
		s.fail(w, err)
		return
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	tags := req.Tags
	if tags == nil {
		tags = []string{}
	}
	zero, zeroN := 0.0, 0
	rec := record{ID: id, Tenant: t.ID, Title: &req.Title, Tags: &tags, Cwd: filepath.ToSlash(filepath.Clean(rel)),
		Model: req.Model, State: stateIdle, CreatedAt: now, UpdatedAt: now, CostUSD: &zero, Turns: &zeroN, Options: &opts}
	if err := s.writeRecord(r.Context(), t.ID, id, rec); err != nil {
		s.fail(w, err)
		return
	}
	s.met.sessionsCreated.Add(1)
	s.log.Info("session created", "session", id, "tenant", t.ID)
	writeJSON(w, http.StatusCreated, rec.public())
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, t Tenant) {
	recs, err := s.listRecords(r.Context(), t.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	out := make([]Record, 0, len(recs))
	for _, rec := range recs {
		out = append(out, s.withLiveState(rec).public())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// withLiveState sets the state of a session open here from memory.
func (s *Server) withLiveState(rec *record) *record {
	if l := s.getLive(rec.ID); l != nil && l.tenant.ID == rec.Tenant {
		rec.State = l.currentState()
	}
	return rec
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, t Tenant) {
	rec, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	p := s.withLiveState(rec).public()
	pending := []json.RawMessage{}
	if l := s.getLive(rec.ID); l != nil {
		pending = l.pendingList()
	} else if held, _, err := session.LeaseHeld(r.Context(), s.store, recordKey(t.ID, rec.ID), time.Now()); err == nil && held {
		// Open on another replica: its stored events say which prompts
		// wait there (the answer goes to the holder; 409 here). Held by
		// nobody, nothing waits, whatever a crashed holder left.
		if evs, err := s.loadEvents(r.Context(), t.ID, rec.ID, 0); err == nil {
			pending = pendingFromEvents(evs)
		}
	}
	p.PendingPermissions = &pending
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, t Tenant) {
	var req struct {
		Title *string   `json:"title"`
		Tags  *[]string `json:"tags"`
	}
	id := r.PathValue("id")
	if _, err := s.loadRecord(r.Context(), t.ID, id); err != nil {
		s.fail(w, err)
		return
	}
	if err := s.decode(w, r, &req, false); err != nil {
		s.fail(w, err)
		return
	}
	if req.Tags != nil && *req.Tags == nil {
		*req.Tags = []string{}
	}
	if err := s.writeRecord(r.Context(), t.ID, id, record{Title: req.Title, Tags: req.Tags}); err != nil {
		s.fail(w, err)
		return
	}
	rec, err := s.loadRecord(r.Context(), t.ID, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.withLiveState(rec).public())
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, t Tenant) {
	id := r.PathValue("id")
	rec, err := s.loadRecord(r.Context(), t.ID, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if l := s.getLive(id); l != nil {
		l.shutdown(r.Context(), true)
	} else if err := s.checkFree(r.Context(), rec); err != nil {
		s.fail(w, err)
		return
	}
	ctx := r.Context()
	if abs, err := s.resolveCwd(t.ID, rec.Cwd); err == nil {
		if err := s.store.Delete(ctx, session.Key{ProjectKey: session.ProjectKey(abs), SessionID: id}); err != nil {
			s.fail(w, fmt.Errorf("serve: deleting the transcript of %s: %w", id, err))
			return
		}
	}
	if err := s.store.Delete(ctx, recordKey(t.ID, id)); err != nil {
		s.fail(w, fmt.Errorf("serve: deleting session %s: %w", id, err))
		return
	}
	s.log.Info("session deleted", "session", id, "tenant", t.ID)
	w.WriteHeader(http.StatusNoContent)
}

// checkFree fails with 409 when another replica holds the session.
func (s *Server) checkFree(ctx context.Context, rec *record) error {
	lease, err := session.AcquireLease(ctx, s.store, recordKey(rec.Tenant, rec.ID), session.LeaseOptions{TTL: s.cfg.LeaseTTL})
	if errors.Is(err, session.ErrSessionBusy) {
		return s.conflict(ctx, rec)
	}
	if err != nil {
		return err
	}
	return lease.Release(ctx)
}

func (s *Server) conflict(ctx context.Context, rec *record) error {
	s.met.leaseConflicts.Add(1)
	holder := s.readHolder(ctx, rec.Tenant, rec.ID)
	if holder == "" {
		holder = "unknown"
	}
	return &apiError{status: http.StatusConflict, typ: "conflict", holder: holder,
		msg: fmt.Sprintf("session %s is running on replica %s; retry once it is idle (its lease is released), or send the request there", rec.ID, holder)}
}

func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request, t Tenant) {
	id := r.PathValue("id")
	rec, err := s.loadRecord(r.Context(), t.ID, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	var req struct {
		Text string `json:"text"`
	}
	if err := s.decode(w, r, &req, false); err != nil {
		s.fail(w, err)
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		s.fail(w, badRequest("text is empty"))
		return
	}
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the replica is draining; try another")
		return
	}
	if err := s.checkBudget(r.Context(), t); err != nil {
		s.fail(w, err)
		return
	}
	for attempt := 0; ; attempt++ {
		l, err := s.activate(r.Context(), rec, t)
		if err != nil {
			s.fail(w, err)
			return
		}
		err = l.send(req.Text)
		if errors.Is(err, agentloop.ErrClosed) && attempt < 2 {
			continue // it was released meanwhile: open it again
		}
		if err != nil {
			s.fail(w, badRequest("the session refused the message: %v", err))
			return
		}
		break
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"accepted": true})
}

func (s *Server) handleInterrupt(w http.ResponseWriter, r *http.Request, t Tenant) {
	rec, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	if l := s.getLive(rec.ID); l != nil {
		l.interrupt(r.Context())
	} else if err := s.checkFree(r.Context(), rec); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"accepted": true})
}

func (s *Server) handlePermission(w http.ResponseWriter, r *http.Request, t Tenant) {
	rec, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	var req struct {
		Behavior     string          `json:"behavior"`
		UpdatedInput json.RawMessage `json:"updated_input"`
		Message      string          `json:"message"`
	}
	if err := s.decode(w, r, &req, false); err != nil {
		s.fail(w, err)
		return
	}
	if req.Behavior != "allow" && req.Behavior != "deny" {
		s.fail(w, badRequest("behavior %q: want allow or deny", req.Behavior))
		return
	}
	if len(req.UpdatedInput) > 0 && (string(req.UpdatedInput) == "null" || req.UpdatedInput[0] != '{') {
		if string(req.UpdatedInput) != "null" {
			s.fail(w, badRequest("updated_input must be a JSON object"))
			return
		}
		req.UpdatedInput = nil
	}
	l := s.getLive(rec.ID)
	if l == nil {
		if err := s.checkFree(r.Context(), rec); err != nil {
			s.fail(w, err)
			return
		}
		writeError(w, http.StatusNotFound, "not_found", "no such pending permission request")
		return
	}
	res := agentloop.PermissionResult{Behavior: req.Behavior, UpdatedInput: req.UpdatedInput, Message: req.Message}
	if req.Behavior == "deny" && res.Message == "" {
		res.Message = "The user denied this tool call."
	}
	if err := l.answer(r.PathValue("request_id"), res); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"request_id": r.PathValue("request_id"), "behavior": req.Behavior})
}

func (s *Server) handleFork(w http.ResponseWriter, r *http.Request, t Tenant) {
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the replica is draining; try another")
		return
	}
	src, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := s.decode(w, r, &struct{}{}, true); err != nil {
		s.fail(w, err)
		return
	}
	rec, err := s.fork(r.Context(), src)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.met.sessionsCreated.Add(1)
	writeJSON(w, http.StatusCreated, rec.public())
}

// fork copies src's history to a new session and stores its record.
func (s *Server) fork(ctx context.Context, src *record) (*record, error) {
	abs, err := s.resolveCwd(src.Tenant, src.Cwd)
	if err != nil {
		return nil, err
	}
	newID := uuid.NewString()
	srcKey := session.Key{ProjectKey: session.ProjectKey(abs), SessionID: src.ID}
	entries, err := s.store.Load(ctx, srcKey)
	if err != nil {
		return nil, fmt.Errorf("serve: reading session %s to fork it: %w", src.ID, err)
	}
	if len(entries) > 0 {
		// The session package forks a local transcript: bring the
		// source over into a scratch directory, fork it there, and copy
		// the fork into the store.
		dir, err := os.MkdirTemp(s.dataDir, "fork-")
		if err != nil {
			return nil, fmt.Errorf("serve: forking: %w", err)
		}
		defer os.RemoveAll(dir)
		if _, err := session.Restore(ctx, s.store, srcKey, dir); err != nil {
			return nil, fmt.Errorf("serve: restoring session %s to fork it: %w", src.ID, err)
		}
		forked, err := session.Fork(dir, src.ID, "")
		if err != nil {
			return nil, fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		path, err := session.Find(dir, forked)
		if err != nil {
			return nil, fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		tr, err := session.Load(path)
		if err != nil {
			return nil, fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		fe := tr.Entries
		for i := range fe {
			fe[i].SessionID = newID
		}
		if err := s.store.Append(ctx, session.Key{ProjectKey: srcKey.ProjectKey, SessionID: newID}, fe); err != nil {
			return nil, fmt.Errorf("serve: writing the fork of %s: %w", src.ID, err)
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	title := ""
	if src.Title != nil && *src.Title != "" {
		title = *src.Title + " (fork)"
	}
	tags := []string{}
	if src.Tags != nil && *src.Tags != nil {
		tags = slices.Clone(*src.Tags)
	}
	zero, zeroN := 0.0, 0
	if src.CostUSD != nil {
		zero = *src.CostUSD
	}
	rec := &record{ID: newID, Tenant: src.Tenant, Title: &title, Tags: &tags, Cwd: src.Cwd, Model: src.Model,
		State: stateIdle, CreatedAt: now, UpdatedAt: now, CostUSD: &zero, Turns: &zeroN, Options: src.Options, ForkOf: src.ID}
	if err := s.writeRecord(ctx, src.Tenant, newID, *rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// pendingFromEvents returns the permission requests of evs that no later
// event resolved, in order.
func pendingFromEvents(evs []event) []json.RawMessage {
	var order []string
	open := map[string]json.RawMessage{}
	for _, ev := range evs {
		var id struct {
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(ev.Data, &id) != nil || id.RequestID == "" {
			continue
		}
		switch ev.Kind {
		case kindPermissionRequest:
			if _, seen := open[id.RequestID]; !seen {
				order = append(order, id.RequestID)
			}
			open[id.RequestID] = ev.Data
		case kindPermissionResolved:
			delete(open, id.RequestID)
		}
	}
	out := []json.RawMessage{}
	for _, id := range order {
		if d, ok := open[id]; ok {
			out = append(out, d)
			delete(open, id)
		}
	}
	return out
}
