package serve

// The HTTP handlers of the session API, one per route (see Server.routes).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session"
)

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
	if req.Model != "" && strings.TrimSpace(req.Model) == "" {
		s.fail(w, badRequest("model %q is blank: give a model id or alias, or leave it out for the default", req.Model))
		return
	}
	opts := sessionOptions{Model: req.Model, SystemPrompt: req.SystemPrompt, AppendSystemPrompt: req.AppendSystemPrompt,
		PermissionMode: req.PermissionMode, AllowedTools: req.AllowedTools, DisallowedTools: req.DisallowedTools,
		MaxTurns: req.MaxTurns, MaxBudgetUSD: req.MaxBudgetUSD, MCPServers: req.MCPServers, Agents: req.Agents,
		Effort: req.Effort}
	if req.Tools != nil {
		opts.Tools, opts.ToolsSet = *req.Tools, true
	}
	if err := s.checkMode(req.PermissionMode); err != nil {
		s.fail(w, err)
		return
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
	o, err := s.options(&opts, abs)
	if err != nil {
		s.fail(w, badRequest("%v", err))
		return
	}
	if c, ok := s.backend.(Checker); ok {
		if err := c.Check(o); err != nil {
			s.fail(w, badRequest("%v", err))
			return
		}
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
	states := s.liveStates(t.ID)
	recs, err := s.listRecords(r.Context(), t.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	out := make([]Record, 0, len(recs))
	for _, rec := range recs {
		out = append(out, states.apply(rec).public())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// afterGetLoad, set only by tests before a server starts, runs in GET
// /v1/sessions/{id} between loading the record and reporting it.
var afterGetLoad func()

// liveState is the states of the sessions of a tenant open here, read from
// memory BEFORE their records are loaded: a turn's end stores its cost and
// turns in the record and only then makes the session idle (live.onResult),
// so a reader that reports a session idle reports what its turns cost.
// Read the other way round, a turn ending in between showed idle with the
// cost from before it.
type liveState map[string]string

// liveStates reads the states of tenant's sessions open here, or of the
// ones in ids when given.
func (s *Server) liveStates(tenant string, ids ...string) liveState {
	s.mu.Lock()
	var ls []*live
	if ids == nil {
		for _, l := range s.live {
			ls = append(ls, l)
		}
	}
	for _, id := range ids {
		if l := s.live[id]; l != nil {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	out := liveState{}
	for _, l := range ls {
		if l.tenant.ID == tenant {
			out[l.id] = l.currentState()
		}
	}
	return out
}

// apply sets rec's state from st when its session is open here.
func (st liveState) apply(rec *record) *record {
	if v, ok := st[rec.ID]; ok {
		rec.State = v
	}
	return rec
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, t Tenant) {
	states := s.liveStates(t.ID, r.PathValue("id"))
	rec, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	if afterGetLoad != nil {
		afterGetLoad()
	}
	p := states.apply(rec).public()
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
	states := s.liveStates(t.ID, id)
	rec, err := s.loadRecord(r.Context(), t.ID, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, states.apply(rec).public())
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
	} else if reply, err := s.viaHolder(r.Context(), rec, controlRequest{Op: opDelete}); err != nil {
		s.fail(w, err)
		return
	} else if reply != nil && reply.Status != http.StatusOK {
		writeRaw(w, reply.Status, reply.Body)
		return
	} // else the holder closed it (or none holds it): the records go here
	ctx := r.Context()
	if e, ok := s.backend.(Ender); ok {
		if err := e.End(ctx, id); err != nil {
			s.fail(w, fmt.Errorf("serve: ending session %s in its backend: %w", id, err))
			return
		}
	}
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
	} else if reply, err := s.viaHolder(r.Context(), rec, controlRequest{Op: opInterrupt}); err != nil {
		s.fail(w, err)
		return
	} else if reply != nil {
		writeRaw(w, reply.Status, reply.Body)
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
	res := agentloop.PermissionResult{Behavior: req.Behavior, UpdatedInput: req.UpdatedInput, Message: req.Message}
	if req.Behavior == "deny" && res.Message == "" {
		res.Message = "The user denied this tool call."
	}
	l := s.getLive(rec.ID)
	if l == nil {
		reply, err := s.viaHolder(r.Context(), rec, controlRequest{Op: opPermission, RequestID: r.PathValue("request_id"), Answer: rawJSON(res)})
		switch {
		case err != nil:
			s.fail(w, err)
		case reply != nil:
			writeRaw(w, reply.Status, reply.Body)
		default: // nobody holds it: the request died with its turn
			writeError(w, http.StatusNotFound, "not_found", "no such pending permission request")
		}
		return
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
	if s.backend.Durable() {
		if err := s.forkDurable(ctx, src, newID, abs); err != nil {
			return nil, err
		}
	} else if err := s.forkTranscript(ctx, src, newID, abs); err != nil {
		return nil, err
	}
	return s.forkRecord(ctx, src, newID)
}

// forkDurable forks src into newID with the durable backend, once src is
// idle.
func (s *Server) forkDurable(ctx context.Context, src *record, newID, abs string) error {
	f, ok := s.backend.(Forker)
	if !ok {
		return &apiError{status: http.StatusNotImplemented, typ: "unsupported", msg: "this server's session backend cannot fork sessions"}
	}
	cur, err := s.loadRecord(ctx, src.Tenant, src.ID)
	if err != nil {
		return err
	}
	if cur.State != "" && cur.State != stateIdle {
		return &apiError{status: http.StatusConflict, typ: "conflict", msg: fmt.Sprintf("session %s is %s; fork it once its turn is over", src.ID, cur.State)}
	}
	opts, err := s.options(src.Options, abs)
	if err != nil {
		return badRequest("%v", err)
	}
	if err := f.Fork(ctx, OpenRequest{ID: newID, Options: opts}, src.ID); err != nil {
		return fmt.Errorf("serve: forking session %s: %w", src.ID, err)
	}
	return nil
}

// forkTranscript copies src's transcript in the store to newID.
func (s *Server) forkTranscript(ctx context.Context, src *record, newID, abs string) error {
	srcKey := session.Key{ProjectKey: session.ProjectKey(abs), SessionID: src.ID}
	entries, err := s.store.Load(ctx, srcKey)
	if err != nil {
		return fmt.Errorf("serve: reading session %s to fork it: %w", src.ID, err)
	}
	if len(entries) > 0 {
		// The session package forks a local transcript: bring the
		// source over into a scratch directory, fork it there, and copy
		// the fork into the store.
		dir, err := os.MkdirTemp(s.dataDir, "fork-")
		if err != nil {
			return fmt.Errorf("serve: forking: %w", err)
		}
		defer os.RemoveAll(dir)
		if _, err := session.Restore(ctx, s.store, srcKey, dir); err != nil {
			return fmt.Errorf("serve: restoring session %s to fork it: %w", src.ID, err)
		}
		forked, err := session.Fork(dir, src.ID, "")
		if err != nil {
			return fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		path, err := session.Find(dir, forked)
		if err != nil {
			return fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		tr, err := session.Load(path)
		if err != nil {
			return fmt.Errorf("serve: forking session %s: %w", src.ID, err)
		}
		fe := tr.Entries
		for i := range fe {
			fe[i].SessionID = newID
		}
		if err := s.store.Append(ctx, session.Key{ProjectKey: srcKey.ProjectKey, SessionID: newID}, fe); err != nil {
			return fmt.Errorf("serve: writing the fork of %s: %w", src.ID, err)
		}
	}
	return nil
}

// forkRecord stores the record of src's fork newID.
func (s *Server) forkRecord(ctx context.Context, src *record, newID string) (*record, error) {
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
