package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// The states of a session.
const (
	stateIdle           = "idle"
	stateRunning        = "running"
	stateRequiresAction = "requires_action"
	// stateInterrupted is a session whose holder died in the middle of a
	// turn (in-process backend): the turn is lost, the session takes new
	// messages.
	stateInterrupted = "interrupted"
)

// Event kinds.
const (
	kindMessage            = "message"
	kindPermissionRequest  = "permission_request"
	kindPermissionResolved = "permission_resolved"
	kindState              = "state"
)

// live is a session open on this replica: its client, lease, event log
// and pending permission requests.
type live struct {
	s       *Server
	id      string
	tenant  Tenant
	rec     *record
	conn    Conn
	lease   *session.Lease
	slot    *session.Lease // the tenant's concurrency slot (slots.go); nil without a limit
	cfgDir  string         // scratch ConfigDir, removed at shutdown
	cancel  context.CancelFunc
	done    chan struct{} // closed when the message loop ended
	started time.Time     // of the running turn

	evMu    sync.Mutex // held while an event is numbered and stored
	mu      sync.Mutex
	events  []event // the newest MaxEvents events
	nextSeq int64
	notify  chan struct{} // closed and replaced at each event
	pending map[string]*pendingPerm
	order   []string // pending request ids, in order
	handled map[string]bool
	running bool
	state   string
	closed  bool
	idle    *time.Timer
	cost    float64 // the session's cost as of the last result
	pos     int64   // the backend position of the last message published
}

type pendingPerm struct {
	data json.RawMessage
	ch   chan agentloop.PermissionResult
}

func (s *Server) getLive(id string) *live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// openedHere returns a channel closed when the session id opens on this
// replica (at once if it is open).
func (s *Server) openedHere(id string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[id] != nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	w := s.watchers[id]
	if w == nil {
		w = make(chan struct{})
		s.watchers[id] = w
	}
	return w
}

// activate returns the session open here, opening it (taking its lease)
// when it is not.
func (s *Server) activate(ctx context.Context, rec *record, t Tenant) (*live, error) {
	s.mu.Lock()
	for {
		if l := s.live[rec.ID]; l != nil {
			s.mu.Unlock()
			return l, nil
		}
		wait := s.opening[rec.ID]
		if wait == nil {
			break
		}
		// Another request of this replica is opening it: wait for it
		// rather than race it for the lease (and answer 409 naming
		// ourselves).
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	opening := make(chan struct{})
	s.opening[rec.ID] = opening
	defer func() {
		s.mu.Lock()
		delete(s.opening, rec.ID)
		s.mu.Unlock()
		close(opening)
	}()
	s.mu.Unlock()
	abs, err := s.resolveCwd(t.ID, rec.Cwd)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if err := makeCwd(abs); err != nil {
		return nil, err
	}
	lease, err := session.AcquireLease(ctx, s.store, recordKey(t.ID, rec.ID), session.LeaseOptions{TTL: s.cfg.LeaseTTL})
	if errors.Is(err, session.ErrSessionBusy) {
		return nil, s.conflict(ctx, rec)
	}
	if err != nil {
		return nil, fmt.Errorf("serve: taking the lease of %s: %w", rec.ID, err)
	}
	slot, err := s.takeSlot(ctx, t)
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = lease.Release(rctx)
		return nil, err
	}
	l, err := s.open(ctx, rec, t, abs, lease)
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = lease.Release(rctx)
		if slot != nil {
			_ = slot.Release(rctx)
		}
		if errors.Is(err, agentloop.ErrSessionBusy) {
			return nil, s.conflict(ctx, rec)
		}
		return nil, err
	}
	l.slot = slot
	s.mu.Lock()
	if other := s.live[rec.ID]; other != nil {
		// Another request opened it meanwhile (and so it held the lease
		// before us, which cannot be: the store's lease is exclusive);
		// keep that one.
		s.mu.Unlock()
		l.shutdown(context.Background(), false)
		return other, nil
	}
	s.live[rec.ID] = l
	if w := s.watchers[rec.ID]; w != nil {
		close(w)
		delete(s.watchers, rec.ID)
	}
	s.mu.Unlock()
	go l.renew()
	s.log.Info("session opened", "session", rec.ID, "tenant", t.ID, "replica", s.cfg.ReplicaID)
	return l, nil
}

// checkBudget fails with 429 when the tenant spent its daily budget.
func (s *Server) checkBudget(ctx context.Context, t Tenant) error {
	if t.DailyBudgetUSD <= 0 {
		return nil
	}
	spent, err := s.spentToday(ctx, t.ID)
	if err != nil {
		return err
	}
	if spent >= t.DailyBudgetUSD {
		return &apiError{status: http.StatusTooManyRequests, typ: "limit",
			msg: fmt.Sprintf("tenant %s spent $%.4f today, its daily budget is $%.4f", t.ID, spent, t.DailyBudgetUSD)}
	}
	return nil
}

// open makes the client of a session whose lease is taken.
func (s *Server) open(ctx context.Context, rec *record, t Tenant, abs string, lease *session.Lease) (*live, error) {
	evs, err := s.loadEvents(ctx, t.ID, rec.ID, 0)
	if err != nil {
		return nil, err
	}
	l := &live{s: s, id: rec.ID, tenant: t, rec: rec, lease: lease, done: make(chan struct{}),
		notify: make(chan struct{}), pending: map[string]*pendingPerm{}, handled: map[string]bool{}, state: stateIdle}
	stale := rec.State == stateRunning || rec.State == stateRequiresAction
	if s.backend.Durable() && stale {
		// Taken over while its turn goes on in the backend: it runs until
		// the backend's stream brings the turn's result.
		l.running, l.state, l.started = true, stateRunning, time.Now()
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Pos > 0 {
			l.pos = evs[i].Pos
			break
		}
	}
	if n := len(evs); n > 0 {
		l.nextSeq = evs[n-1].Seq
		if n > s.cfg.MaxEvents {
			evs = evs[n-s.cfg.MaxEvents:]
		}
		l.events = evs
	}
	if rec.CostUSD != nil {
		l.cost = *rec.CostUSD
	}
	// A fresh ConfigDir each time: the transcript is always restored from
	// the store, never from a stale local copy another replica has since
	// continued.
	if l.cfgDir, err = os.MkdirTemp(s.dataDir, "session-"); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	opts, err := s.options(rec.Options, abs)
	if err != nil {
		os.RemoveAll(l.cfgDir)
		return nil, badRequest("%v", err)
	}
	opts.ConfigDir = l.cfgDir
	if opts.Sandbox, err = s.tenantSandbox(s.tenantRoot(t.ID), l.cfgDir); err != nil {
		os.RemoveAll(l.cfgDir)
		return nil, err
	}
	opts.SessionStore = s.store
	opts.SessionStoreLeaseTTL = s.cfg.LeaseTTL
	opts.CanUseTool = l.canUseTool
	// The tenant's files and this session's own, nobody else's
	// (confine.go); the server's hooks run too.
	hk := maps.Clone(opts.Hooks)
	if hk == nil {
		hk = map[hooks.Event][]hooks.Matcher{}
	}
	hk[hooks.PreToolUse] = append(slices.Clone(hk[hooks.PreToolUse]), confineHook(abs, s.tenantRoot(t.ID), l.cfgDir))
	opts.Hooks = hk
	opts.Logger = s.log.With("session", rec.ID)
	if s.cfg.Observer != nil {
		opts.Observer = s.cfg.Observer
	}
	conn, err := s.backend.Open(ctx, OpenRequest{ID: rec.ID, Options: opts, After: l.pos})
	if err != nil {
		os.RemoveAll(l.cfgDir)
		return nil, fmt.Errorf("serve: opening session %s: %w", rec.ID, err)
	}
	// Recorded once the backend holds the transcript too, so that a 409
	// for a session whose previous holder died names that holder.
	if err := s.writeHolder(ctx, t.ID, rec.ID); err != nil {
		conn.Close()
		os.RemoveAll(l.cfgDir)
		return nil, fmt.Errorf("serve: recording the holder of %s: %w", rec.ID, err)
	}
	l.conn = conn
	if stale && !s.backend.Durable() {
		// Its holder died in the middle of a turn: say so before this
		// replica runs it again.
		l.markInterrupted()
	}
	lctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.loop(lctx)
	if wt, ok := s.store.(session.Watcher); ok {
		go l.controlLoop(lctx, wt) // control.go
	}
	return l, nil
}

// options builds the agentloop options of a session.
func (s *Server) options(o *sessionOptions, cwd string) (*agentloop.Options, error) {
	var opts agentloop.Options
	if s.cfg.Base != nil {
		opts = *s.cfg.Base
	}
	if s.cfg.Provider != nil {
		opts.Provider = s.cfg.Provider
	}
	opts.Cwd = cwd
	// The operator's settings sources only (Config.SettingSources, never
	// nil here: nil would load the tenant's project and local files).
	opts.SettingSources = append([]settings.SettingSource{}, s.cfg.SettingSources...)
	// Only the servers of the request (and of Base): a .mcp.json the
	// session's own tools could write must not start commands here.
	opts.StrictMCPConfig = true
	// A tenant's own project and local files, where the operator loads
	// them, start nothing outside the tenant's sandbox.
	opts.ConfineProjectConfig = true
	if o == nil {
		return &opts, nil
	}
	if o.Model != "" {
		opts.Model = o.Model
	}
	opts.SystemPrompt = o.SystemPrompt
	opts.AppendSystemPrompt = o.AppendSystemPrompt
	if o.PermissionMode != "" {
		m, err := agentloop.ParsePermissionMode(o.PermissionMode)
		if err != nil {
			return nil, fmt.Errorf("permission_mode: %w", err)
		}
		if !s.modeAllowed(o.PermissionMode) {
			// Stored before the operator narrowed AllowModes.
			return nil, fmt.Errorf("permission_mode %s is no longer allowed on this server", o.PermissionMode)
		}
		opts.PermissionMode = m
	}
	if o.ToolsSet {
		opts.Tools = append([]string{}, o.Tools...)
	}
	opts.AllowedTools = slices.Concat(opts.AllowedTools, o.AllowedTools)
	opts.DisallowedTools = slices.Concat(opts.DisallowedTools, o.DisallowedTools)
	if o.MaxTurns < 0 {
		return nil, fmt.Errorf("max_turns %d is negative", o.MaxTurns)
	}
	if o.MaxBudgetUSD < 0 {
		return nil, fmt.Errorf("max_budget_usd %v is negative", o.MaxBudgetUSD)
	}
	opts.MaxTurns = o.MaxTurns
	opts.MaxBudgetUSD = o.MaxBudgetUSD
	if o.Effort != "" {
		opts.Effort = o.Effort
	}
	if len(o.MCPServers) > 0 {
		base := opts.MCPServers
		opts.MCPServers = map[string]agentloop.MCPServerConfig{}
		maps.Copy(opts.MCPServers, base)
		for name, raw := range o.MCPServers {
			var c agentloop.MCPServerConfig
			if err := strictJSON(raw, &c); err != nil {
				return nil, fmt.Errorf("mcp_servers.%s: %w", name, err)
			}
			if c.Command != "" {
				return nil, fmt.Errorf("mcp_servers.%s: stdio servers (command) cannot be configured over HTTP; use an http or sse server (url)", name)
			}
			if c.URL == "" {
				return nil, fmt.Errorf("mcp_servers.%s: url is required", name)
			}
			opts.MCPServers[name] = c
		}
		if opts.MCPConnector == nil {
			opts.MCPConnector = mcp.Connector{}
		}
	}
	if len(o.Agents) > 0 {
		base := opts.Agents
		opts.Agents = map[string]agentloop.AgentDefinition{}
		maps.Copy(opts.Agents, base)
		for name, raw := range o.Agents {
			var a agentloop.AgentDefinition
			if err := strictJSON(raw, &a); err != nil {
				return nil, fmt.Errorf("agents.%s: %w", name, err)
			}
			opts.Agents[name] = a
		}
	}
	return &opts, nil
}

func strictJSON(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// renew keeps the lease while the session is open here.
func (l *live) renew() {
	t := time.NewTicker(l.lease.RenewEvery())
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			if l.s.crashed.Load() {
				continue // a dead process renews nothing
			}
			ctx, cancel := context.WithTimeout(context.Background(), l.lease.RenewEvery())
			err := l.lease.Renew(ctx)
			if l.slot != nil {
				if serr := l.slot.Renew(ctx); serr != nil {
					l.s.log.Warn("renewing a tenant's concurrency slot failed", "session", l.id, "err", serr)
				}
			}
			cancel()
			if errors.Is(err, session.ErrLeaseLost) {
				l.s.log.Error("session lease lost; closing the session here", "session", l.id, "err", err)
				go l.shutdown(context.Background(), !l.s.backend.Durable())
				return
			}
			if err != nil {
				l.s.log.Warn("renewing a session lease failed", "session", l.id, "err", err)
			}
		}
	}
}

// loop runs the client's streaming input and publishes its messages.
func (l *live) loop(ctx context.Context) {
	defer close(l.done)
	for d, err := range l.conn.Messages(ctx) {
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, agentloop.ErrClosed) {
				return
			}
			l.s.log.Warn("session stream error", "session", l.id, "err", err)
			continue
		}
		l.onMessage(d)
	}
}

func (l *live) onMessage(d Delivery) {
	m := d.Message
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		l.s.log.Error("encoding a message", "session", l.id, "err", err)
		return
	}
	data := bytes.TrimRight(buf.Bytes(), "\n")
	// Counted before it is published: whoever sees the line finds it in
	// the metrics.
	switch v := m.(type) {
	case *agentloop.UserMessage:
		if n := toolErrors(data); n > 0 {
			l.s.met.toolErrors.Add(int64(n))
		}
	case *agentloop.ResultMessage:
		l.countResult(v)
	}
	l.publishAt(kindMessage, data, d.Pos)
	if v, ok := m.(*agentloop.ResultMessage); ok {
		l.onResult(v)
	}
}

// toolErrors counts the tool results marked is_error in a user line.
func toolErrors(line []byte) int {
	var u struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &u) != nil {
		return 0
	}
	var blocks []struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
	}
	if json.Unmarshal(u.Message.Content, &blocks) != nil {
		return 0
	}
	n := 0
	for _, b := range blocks {
		if b.Type == "tool_result" && b.IsError {
			n++
		}
	}
	return n
}

// countResult adds a turn's result to the metrics.
func (l *live) countResult(r *agentloop.ResultMessage) {
	m := &l.s.met
	m.turns.Add(1)
	if r.IsError {
		m.turnErrors.Add(1)
	}
	m.inputTokens.Add(r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens)
	m.outputTokens.Add(r.Usage.OutputTokens)
	m.observeTurn(float64(r.DurationMs) / 1000)
}

// onResult records a published result: the session's cost and turns, the
// tenant's spend, the state.
func (l *live) onResult(r *agentloop.ResultMessage) {
	m := &l.s.met
	l.mu.Lock()
	delta := r.TotalCostUSD - l.cost
	if delta < 0 {
		delta = r.TotalCostUSD
	}
	l.cost += delta
	cost := l.cost
	turns := 1
	if l.rec.Turns != nil {
		turns = *l.rec.Turns + 1
	}
	l.rec.Turns, l.rec.CostUSD = &turns, &cost
	l.mu.Unlock()
	m.addCost(delta)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.s.writeRecord(ctx, l.tenant.ID, l.id, record{CostUSD: &cost, Turns: &turns}); err != nil {
		l.s.log.Error("updating a session record", "session", l.id, "err", err)
	}
	if err := l.s.addSpend(ctx, l.tenant.ID, delta); err != nil {
		l.s.log.Error("recording a tenant's spend", "session", l.id, "err", err)
	}
	// Idle only once the record and the tenant's spend say what the turn
	// cost: a reader that sees the session idle sees its cost too.
	l.mu.Lock()
	if l.conn.Queued() == 0 {
		l.running = false
	}
	l.mu.Unlock()
	l.updateState()
}

// currentState derives the session's state.
func (l *live) currentState() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateLocked()
}

func (l *live) stateLocked() string {
	switch {
	case len(l.pending) > 0:
		return stateRequiresAction
	case l.running:
		return stateRunning
	}
	return stateIdle
}

// updateState publishes the state when it changed, stores it in the
// record, and arms the idle release.
func (l *live) updateState() {
	l.evMu.Lock()
	st, changed := l.publishStateLocked()
	l.evMu.Unlock()
	if changed {
		l.storeState(st)
	}
}

// publishStateLocked works out the state, arms the idle release, and
// publishes the state when it changed. The caller holds evMu.
func (l *live) publishStateLocked() (string, bool) {
	l.mu.Lock()
	st := l.stateLocked()
	changed := st != l.state
	l.state = st
	if l.idle != nil {
		l.idle.Stop()
		l.idle = nil
	}
	if st == stateIdle && !l.closed {
		l.idle = time.AfterFunc(l.s.cfg.IdleRelease, l.idleRelease)
	}
	l.mu.Unlock()
	if changed {
		l.publishLocked(kindState, rawJSON(map[string]string{"state": st}))
	}
	return st, changed
}

// storeState writes the state into the session's record.
func (l *live) storeState(st string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.s.writeRecord(ctx, l.tenant.ID, l.id, record{State: st}); err != nil {
		l.s.log.Error("updating a session record", "session", l.id, "err", err)
	}
}

// idleRelease closes the session here when it stayed idle.
func (l *live) idleRelease() {
	l.mu.Lock()
	idle := l.stateLocked() == stateIdle && !l.closed && l.conn.Queued() == 0
	if idle {
		l.closed = true // under the same lock as the check: send sees it
	}
	l.mu.Unlock()
	if idle {
		l.close(context.Background(), false)
	}
}

// publish numbers an event, keeps it, stores it and wakes the streams.
func (l *live) publish(kind string, data json.RawMessage) {
	l.publishAt(kind, data, 0)
}

// publishAt is publish for a message at the backend position pos (0: not
// numbered). A durable backend's message at or before the last position
// published was published already (by the replica that held the session
// before): it is dropped.
func (l *live) publishAt(kind string, data json.RawMessage, pos int64) {
	l.evMu.Lock()
	defer l.evMu.Unlock()
	l.publishPosLocked(kind, data, pos)
}

// publishLocked is publish for a caller that holds evMu.
func (l *live) publishLocked(kind string, data json.RawMessage) {
	l.publishPosLocked(kind, data, 0)
}

func (l *live) publishPosLocked(kind string, data json.RawMessage, pos int64) {
	l.mu.Lock()
	if pos > 0 && pos <= l.pos {
		l.mu.Unlock()
		return
	}
	if pos > 0 {
		l.pos = pos
	}
	l.nextSeq++ // only under evMu, so events are stored and shown in order
	ev := event{Seq: l.nextSeq, Kind: kind, Data: data, Pos: pos}
	l.mu.Unlock()
	// Stored before it is shown: a client that sees the event here and
	// asks another replica (which reads the store) finds it there too.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := l.s.appendEvent(ctx, l.tenant.ID, l.id, ev); err != nil {
		l.s.log.Error("storing a session event; it replays only from this replica's memory", "session", l.id, "seq", ev.Seq, "err", err)
	}
	cancel()
	l.mu.Lock()
	l.events = append(l.events, ev)
	if n := len(l.events); n > l.s.cfg.MaxEvents {
		l.events = append(l.events[:0:0], l.events[n-l.s.cfg.MaxEvents:]...)
	}
	close(l.notify)
	l.notify = make(chan struct{})
	l.mu.Unlock()
}

// eventsAfter returns the kept events with seq > after, whether they are
// complete (false: older ones must be read from the store), and a channel
// closed at the next event.
func (l *live) eventsAfter(after int64) ([]event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	complete := len(l.events) == 0 || l.events[0].Seq <= after+1
	var out []event
	for _, ev := range l.events {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	return out, complete, l.notify
}

// afterSend, set only by tests before a server starts, runs in send
// between Send and the events of the message: it widens the window in
// which the turn's own events could overtake them.
var afterSend func()

// send queues a message and marks the session running.
func (l *live) send(text string) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return agentloop.ErrClosed
	}
	l.running = true
	l.started = time.Now()
	l.mu.Unlock()
	// The event lock is held from Send until the state and the prompt's
	// line are numbered: the turn starts inside Send, and its first events
	// (system/init) must not come before "running" and the prompt. Send
	// only queues; it never waits for the goroutine that publishes them.
	l.evMu.Lock()
	id, err := l.conn.Send(text)
	if afterSend != nil {
		afterSend()
	}
	if err != nil {
		l.evMu.Unlock()
		l.mu.Lock()
		l.running = false
		l.mu.Unlock()
		l.updateState()
		return err
	}
	st, changed := l.publishStateLocked()
	l.publishUserLocked(id, text)
	l.evMu.Unlock()
	if changed {
		l.storeState(st)
	}
	return nil
}

// markInterrupted publishes and stores the interrupted state of a session
// opened here after its holder died mid-turn.
func (l *live) markInterrupted() {
	l.evMu.Lock()
	l.publishLocked(kindState, rawJSON(map[string]string{"state": stateInterrupted}))
	l.mu.Lock()
	l.state = stateInterrupted
	l.mu.Unlock()
	l.evMu.Unlock()
	l.storeState(stateInterrupted)
}

// publishUserLocked puts the accepted message in the event log as the user
// line stream-json replays (--replay-user-messages), so that a page that
// reloads the session shows what was asked as well as the answers.
func (l *live) publishUserLocked(id, text string) {
	line := map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}},
		"parent_tool_use_id": nil,
		"uuid":               id,
		"session_id":         l.id,
		"isReplay":           true,
	}
	data, err := json.Marshal(line)
	if err != nil {
		l.s.log.Error("encoding a user message", "session", l.id, "err", err)
		return
	}
	l.publishLocked(kindMessage, data)
}

// interrupt stops the running turn, if any.
func (l *live) interrupt(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := l.conn.Interrupt(ctx); err != nil && !errors.Is(err, agentloop.ErrClosed) {
		l.s.log.Warn("interrupting a turn", "session", l.id, "err", err)
	}
}

// shutdown closes the session here: interrupts a running turn when
// interrupt (else waits for nothing: callers only close idle sessions or
// drain), closes the client (its history stays valid), and releases the
// lease.
func (l *live) shutdown(ctx context.Context, interrupt bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return
	}
	l.closed = true
	l.mu.Unlock()
	l.close(ctx, interrupt)
}

// close does shutdown's work once closed is set.
func (l *live) close(ctx context.Context, interrupt bool) {
	l.mu.Lock()
	if l.idle != nil {
		l.idle.Stop()
	}
	l.mu.Unlock()
	l.s.mu.Lock()
	if l.s.live[l.id] == l {
		delete(l.s.live, l.id)
	}
	l.s.mu.Unlock()
	if interrupt {
		l.interrupt(ctx)
	}
	if err := l.conn.Close(); err != nil {
		l.s.log.Warn("closing a session", "session", l.id, "err", err)
	}
	l.cancel()
	<-l.done
	if l.s.backend.Durable() && !interrupt {
		// The turn goes on in the backend: the record keeps saying it
		// runs, so that the replica that takes the session over relays
		// the rest.
		l.mu.Lock()
		l.pending = map[string]*pendingPerm{}
		l.order = nil
		l.mu.Unlock()
		l.release()
		return
	}
	l.mu.Lock()
	wasRunning := l.running || len(l.pending) > 0
	l.running = false
	l.pending = map[string]*pendingPerm{}
	l.order = nil
	l.mu.Unlock()
	if wasRunning {
		l.updateState()
	}
	l.release()
}

// release gives the session's lease and slot back and removes its scratch
// directory.
func (l *live) release() {
	if l.s.crashed.Load() {
		return
	}
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.lease.Release(rctx); err != nil {
		l.s.log.Warn("releasing a session lease", "session", l.id, "err", err)
	}
	if l.slot != nil {
		if err := l.slot.Release(rctx); err != nil {
			l.s.log.Warn("releasing a tenant's concurrency slot", "session", l.id, "err", err)
		}
	}
	os.RemoveAll(l.cfgDir)
	l.s.log.Info("session closed", "session", l.id, "replica", l.s.cfg.ReplicaID)
}
