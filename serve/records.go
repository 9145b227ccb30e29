package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop/session"
)

// How the server lays out its data in the session.Store (next to the
// transcripts, which the agentloop clients mirror under the project key of
// their working directory):
//
//	records:  Key{ProjectKey: "serve-" + h(tenant), SessionID: id}
//	          entries of type "serve_record", each a partial record; they
//	          are folded in order (later fields win), so that replicas
//	          updating different fields do not overwrite each other.
//	events:   the same key, Subpath "events": one entry per event
//	          {"seq","kind","data"}, appended by the lease holder only.
//	holder:   Subpath "holder": {"replica"} appended by each new holder.
//	lease:    Subpath "lease": session.AcquireLease's claims.
//	spend:    Key{ProjectKey: "serve-spend-" + h(tenant), SessionID:
//	          "d" + YYYYMMDD}: {"cost_usd"} per finished turn.
//
// h is the first 32 hex digits of the SHA-256 of the tenant id, so that
// any tenant id makes a valid key.
const (
	typeRecord = "serve_record"
	typeEvent  = "serve_event"
	typeHolder = "serve_holder"
	typeSpend  = "serve_spend"

	subEvents = "events"
	subHolder = "holder"
)

func tenantHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

func recordKey(tenant, id string) session.Key {
	return session.Key{ProjectKey: "serve-" + tenantHash(tenant), SessionID: id}
}

func spendKey(tenant string, day time.Time) session.Key {
	return session.Key{ProjectKey: "serve-spend-" + tenantHash(tenant), SessionID: "d" + day.UTC().Format("20060102")}
}

// sessionOptions are the options a session was created with, kept in its
// record so that any replica can open it.
type sessionOptions struct {
	Model              string                     `json:"model,omitempty"`
	SystemPrompt       string                     `json:"system_prompt,omitempty"`
	AppendSystemPrompt string                     `json:"append_system_prompt,omitempty"`
	PermissionMode     string                     `json:"permission_mode,omitempty"`
	Tools              []string                   `json:"tools,omitempty"`
	AllowedTools       []string                   `json:"allowed_tools,omitempty"`
	DisallowedTools    []string                   `json:"disallowed_tools,omitempty"`
	MaxTurns           int                        `json:"max_turns,omitempty"`
	MaxBudgetUSD       float64                    `json:"max_budget_usd,omitempty"`
	MCPServers         map[string]json.RawMessage `json:"mcp_servers,omitempty"`
	Agents             map[string]json.RawMessage `json:"agents,omitempty"`
	Effort             string                     `json:"effort,omitempty"`
	// ToolsSet records that Tools was given (an empty list offers none).
	ToolsSet bool `json:"tools_set,omitempty"`
}

// record is a session's record as stored. Its public form is [Record].
type record struct {
	ID        string          `json:"id,omitempty"`
	Tenant    string          `json:"tenant,omitempty"`
	Title     *string         `json:"title,omitempty"`
	Tags      *[]string       `json:"tags,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	Model     string          `json:"model,omitempty"`
	State     string          `json:"state,omitempty"`
	CreatedAt time.Time       `json:"created_at,omitzero"`
	UpdatedAt time.Time       `json:"updated_at,omitzero"`
	CostUSD   *float64        `json:"cost_usd,omitempty"`
	Turns     *int            `json:"turns,omitempty"`
	Options   *sessionOptions `json:"options,omitempty"`
	// ForkOf names the session this one was forked from.
	ForkOf string `json:"fork_of,omitempty"`
}

// Record is a session's record as the API returns it.
type Record struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Tags      []string  `json:"tags"`
	Cwd       string    `json:"cwd"`
	Model     string    `json:"model"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	CostUSD   float64   `json:"cost_usd"`
	Turns     int       `json:"turns"`
	ForkOf    string    `json:"fork_of,omitempty"`
	// PendingPermissions is set by GET /v1/sessions/{id} only.
	PendingPermissions *[]json.RawMessage `json:"pending_permissions,omitempty"`
}

func (r *record) public() Record {
	p := Record{ID: r.ID, Cwd: r.Cwd, Model: r.Model, State: r.State, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, ForkOf: r.ForkOf, Tags: []string{}}
	if r.Title != nil {
		p.Title = *r.Title
	}
	if r.Tags != nil && *r.Tags != nil {
		p.Tags = *r.Tags
	}
	if r.CostUSD != nil {
		p.CostUSD = *r.CostUSD
	}
	if r.Turns != nil {
		p.Turns = *r.Turns
	}
	if p.State == "" {
		p.State = stateIdle
	}
	return p
}

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// writeRecord appends a partial record (the fields set in patch).
func (s *Server) writeRecord(ctx context.Context, tenant, id string, patch record) error {
	if s.crashed.Load() {
		return nil
	}
	now := time.Now().UTC()
	if patch.UpdatedAt.IsZero() {
		patch.UpdatedAt = now
	}
	e := session.Entry{Type: typeRecord, UUID: uuid.NewString(), SessionID: id, Timestamp: timestamp(now),
		Extra: map[string]json.RawMessage{"record": rawJSON(patch)}}
	if err := s.store.Append(ctx, recordKey(tenant, id), []session.Entry{e}); err != nil {
		return fmt.Errorf("serve: writing the record of session %s: %w", id, err)
	}
	return nil
}

// errNotFound is a session that does not exist for the tenant.
var errNotFound = errors.New("session not found")

// loadRecord folds the record of a tenant's session; errNotFound when the
// tenant has no such session.
func (s *Server) loadRecord(ctx context.Context, tenant, id string) (*record, error) {
	if (session.Key{ProjectKey: "x", SessionID: id}).Validate() != nil {
		return nil, errNotFound
	}
	entries, err := s.store.Load(ctx, recordKey(tenant, id))
	if err != nil {
		return nil, fmt.Errorf("serve: loading the record of session %s: %w", id, err)
	}
	var r record
	for _, e := range entries {
		if e.Type != typeRecord {
			continue
		}
		if raw, ok := e.Extra["record"]; ok {
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, fmt.Errorf("serve: record of session %s is damaged: %w", id, err)
			}
		}
	}
	if r.ID == "" || r.Tenant != tenant {
		return nil, errNotFound
	}
	return &r, nil
}

// listRecords returns a tenant's sessions, newest first.
func (s *Server) listRecords(ctx context.Context, tenant string) ([]*record, error) {
	list, err := s.store.List(ctx, recordKey(tenant, "x").ProjectKey)
	if err != nil {
		return nil, fmt.Errorf("serve: listing sessions: %w", err)
	}
	var out []*record
	for _, ss := range list {
		r, err := s.loadRecord(ctx, tenant, ss.SessionID)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *record) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// event is one entry of a session's event log.
type event struct {
	Seq  int64           `json:"seq"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
	// Pos is a message's position in a durable backend's stream (see
	// Delivery); not shown to clients.
	Pos int64 `json:"pos,omitempty"`
}

// loadEvents returns the stored events of a session with seq > after.
func (s *Server) loadEvents(ctx context.Context, tenant, id string, after int64) ([]event, error) {
	k := recordKey(tenant, id)
	k.Subpath = subEvents
	entries, err := s.store.Load(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("serve: loading the events of session %s: %w", id, err)
	}
	var out []event
	for _, e := range entries {
		if e.Type != typeEvent {
			continue
		}
		var ev event
		raw := e.Extra["event"]
		if json.Unmarshal(raw, &ev) != nil || ev.Seq <= after {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Seq >= ev.Seq {
			continue // a duplicate from a holder that lost its lease
		}
		out = append(out, ev)
	}
	return out, nil
}

func (s *Server) appendEvent(ctx context.Context, tenant, id string, ev event) error {
	if s.crashed.Load() {
		return nil
	}
	k := recordKey(tenant, id)
	k.Subpath = subEvents
	e := session.Entry{Type: typeEvent, SessionID: id, Timestamp: timestamp(time.Now()),
		Extra: map[string]json.RawMessage{"event": rawJSON(ev)}}
	return s.store.Append(ctx, k, []session.Entry{e})
}

func (s *Server) writeHolder(ctx context.Context, tenant, id string) error {
	k := recordKey(tenant, id)
	k.Subpath = subHolder
	e := session.Entry{Type: typeHolder, SessionID: id, Timestamp: timestamp(time.Now()),
		Extra: map[string]json.RawMessage{"replica": rawJSON(s.cfg.ReplicaID)}}
	return s.store.Append(ctx, k, []session.Entry{e})
}

// readHolder returns the replica that last took the session's lease.
func (s *Server) readHolder(ctx context.Context, tenant, id string) string {
	k := recordKey(tenant, id)
	k.Subpath = subHolder
	entries, err := s.store.Load(ctx, k)
	if err != nil || len(entries) == 0 {
		return ""
	}
	var h string
	_ = json.Unmarshal(entries[len(entries)-1].Extra["replica"], &h)
	return h
}

// addSpend records what a turn of the tenant cost today.
func (s *Server) addSpend(ctx context.Context, tenant string, usd float64) error {
	if usd <= 0 {
		return nil
	}
	now := time.Now()
	e := session.Entry{Type: typeSpend, SessionID: spendKey(tenant, now).SessionID, Timestamp: timestamp(now),
		Extra: map[string]json.RawMessage{"cost_usd": rawJSON(usd)}}
	return s.store.Append(ctx, spendKey(tenant, now), []session.Entry{e})
}

// spentToday returns what the tenant's turns cost today (UTC).
func (s *Server) spentToday(ctx context.Context, tenant string) (float64, error) {
	entries, err := s.store.Load(ctx, spendKey(tenant, time.Now()))
	if err != nil {
		return 0, fmt.Errorf("serve: reading the tenant's spend: %w", err)
	}
	var sum float64
	for _, e := range entries {
		var v float64
		if json.Unmarshal(e.Extra["cost_usd"], &v) == nil {
			sum += v
		}
	}
	return sum, nil
}
