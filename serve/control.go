package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/session"
)

// Control from any replica.
//
// A permission answer, an interrupt or a delete that reaches a replica
// not holding the session goes to the holder through the store: the
// replica appends a request to the session's control log, the holder
// (which watches the logs of the sessions it holds) applies it and
// appends its answer, which the first replica gives its client. When the
// holder does not answer within ForwardTimeout and its lease is free
// (it died), the replica applies the request itself. Only stores that
// are session.Watchers carry this; with others the answer stays 409
// naming the holder.

// ForwardTimeout is how long a replica waits for the holder's answer to a
// forwarded control request.
var ForwardTimeout = 10 * time.Second

// Control operations.
const (
	opInterrupt  = "interrupt"
	opPermission = "permission"
	opDelete     = "delete"
	opMode       = "mode"
)

// Entry types and subkey of the control log.
const (
	typeControlRequest = "serve_control_request"
	typeControlReply   = "serve_control_reply"
	subControl         = "control"
)

// controlRequest is one forwarded call.
type controlRequest struct {
	ID        string          `json:"id"`
	Op        string          `json:"op"`
	RequestID string          `json:"request_id,omitempty"` // permission
	Answer    json.RawMessage `json:"answer,omitempty"`     // permission: the PermissionResult
	Mode      string          `json:"mode,omitempty"`       // mode
}

// controlReply is the holder's answer.
type controlReply struct {
	ID     string          `json:"id"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

func controlKey(tenant, id string) session.Key {
	k := recordKey(tenant, id)
	k.Subpath = subControl
	return k
}

// forward sends req to the holder of rec and returns its answer. ok is
// false when the store cannot carry it (not a Watcher): the caller
// answers 409 as before.
func (s *Server) forward(ctx context.Context, rec *record, req controlRequest) (reply controlReply, ok bool, err error) {
	wt, isWatcher := s.store.(session.Watcher)
	if !isWatcher {
		return reply, false, nil
	}
	k := controlKey(rec.Tenant, rec.ID)
	wctx, cancel := context.WithTimeout(ctx, ForwardTimeout)
	defer cancel()
	ch, err := wt.Watch(wctx, k)
	if err != nil {
		return reply, true, fmt.Errorf("serve: watching the control log of %s: %w", rec.ID, err)
	}
	req.ID = uuid.NewString()
	e := session.Entry{Type: typeControlRequest, UUID: req.ID, SessionID: rec.ID, Timestamp: timestamp(time.Now()),
		Extra: map[string]json.RawMessage{"request": rawJSON(req)}}
	if err := s.store.Append(ctx, k, []session.Entry{e}); err != nil {
		return reply, true, fmt.Errorf("serve: forwarding to the holder of %s: %w", rec.ID, err)
	}
	read := 0
	for {
		entries, err := wt.LoadFrom(ctx, k, read)
		if err != nil {
			return reply, true, fmt.Errorf("serve: reading the control log of %s: %w", rec.ID, err)
		}
		read += len(entries)
		for _, e := range entries {
			var r controlReply
			if e.Type == typeControlReply && json.Unmarshal(e.Extra["reply"], &r) == nil && r.ID == req.ID {
				return r, true, nil
			}
		}
		select {
		case _, open := <-ch:
			if open {
				continue
			}
		case <-wctx.Done():
		}
		if ctx.Err() != nil {
			return reply, true, ctx.Err()
		}
		return reply, true, errHolderSilent
	}
}

// errHolderSilent: the holder did not answer a forwarded request in time.
var errHolderSilent = errors.New("serve: the replica holding the session did not answer")

// controlLoop applies, on the holder, the control requests other replicas
// append to the session's log, until ctx ends. Requests older than the
// session's opening here are not for it.
func (l *live) controlLoop(ctx context.Context, wt session.Watcher) {
	k := controlKey(l.tenant.ID, l.id)
	ch, err := wt.Watch(ctx, k)
	if err != nil {
		l.s.log.Warn("watching a session's control log; control calls on other replicas answer 409", "session", l.id, "err", err)
		return
	}
	old, err := wt.LoadFrom(ctx, k, 0)
	if err != nil {
		l.s.log.Warn("reading a session's control log", "session", l.id, "err", err)
	}
	read := len(old)
	for {
		select {
		case <-ctx.Done():
			return
		case _, open := <-ch:
			if !open {
				if ctx.Err() != nil {
					return
				}
				if ch, err = wt.Watch(ctx, k); err != nil {
					return
				}
			}
		}
		entries, err := wt.LoadFrom(ctx, k, read)
		if err != nil {
			continue
		}
		read += len(entries)
		for _, e := range entries {
			var req controlRequest
			if e.Type != typeControlRequest || json.Unmarshal(e.Extra["request"], &req) != nil || l.s.crashed.Load() {
				continue
			}
			status, body := l.apply(ctx, req)
			r := controlReply{ID: req.ID, Status: status, Body: body}
			reply := session.Entry{Type: typeControlReply, UUID: "reply-" + req.ID, SessionID: l.id, Timestamp: timestamp(time.Now()),
				Extra: map[string]json.RawMessage{"reply": rawJSON(r)}}
			if err := l.s.store.Append(context.WithoutCancel(ctx), k, []session.Entry{reply}); err != nil {
				l.s.log.Warn("answering a forwarded control request", "session", l.id, "err", err)
			}
		}
	}
}

// apply carries out a forwarded request here and returns the HTTP status
// and body its caller gets.
func (l *live) apply(ctx context.Context, req controlRequest) (int, json.RawMessage) {
	switch req.Op {
	case opInterrupt:
		go l.interrupt(context.WithoutCancel(ctx))
		return http.StatusAccepted, rawJSON(map[string]bool{"accepted": true})
	case opPermission:
		var res agentloop.PermissionResult
		if err := json.Unmarshal(req.Answer, &res); err != nil {
			return errorBody(badRequest("answer: %v", err))
		}
		if err := l.answer(req.RequestID, res); err != nil {
			return errorBody(err)
		}
		return http.StatusOK, rawJSON(map[string]any{"request_id": req.RequestID, "behavior": res.Behavior})
	case opMode:
		status, body := l.setMode(ctx, req.Mode)
		return status, body
	case opDelete:
		// Closed before the caller deletes the records, so that nothing
		// of it is written after them. Not on the loop's context, which
		// the shutdown cancels.
		l.shutdown(context.WithoutCancel(ctx), true)
		return http.StatusOK, rawJSON(map[string]bool{"closed": true})
	}
	return errorBody(badRequest("unknown control operation %q", req.Op))
}

// errorBody is the status and body s.fail would write for err.
func errorBody(err error) (int, json.RawMessage) {
	var ae *apiError
	if errors.As(err, &ae) {
		body := map[string]any{"type": ae.typ, "message": ae.msg}
		if ae.holder != "" {
			body["holder"] = ae.holder
		}
		return ae.status, rawJSON(map[string]any{"error": body})
	}
	return http.StatusInternalServerError, rawJSON(map[string]any{"error": map[string]string{"type": "internal", "message": "internal error"}})
}

// viaHolder carries req out on the replica holding rec, when one does:
// nil, nil when the session is free (not held, or its holder died while
// it waited), so that the caller carries it out here; the holder's reply
// when it answered; otherwise the error to answer (409 naming the holder
// when the store cannot forward, 504 when the holder is silent but still
// holds the lease).
func (s *Server) viaHolder(ctx context.Context, rec *record, req controlRequest) (*controlReply, error) {
	conflict := s.checkFree(ctx, rec)
	if conflict == nil || !isConflict(conflict) {
		return nil, conflict
	}
	reply, ok, err := s.forward(ctx, rec, req)
	switch {
	case !ok:
		return nil, conflict
	case errors.Is(err, errHolderSilent):
		if s.checkFree(ctx, rec) == nil {
			return nil, nil // it died: go on here
		}
		return nil, &apiError{status: http.StatusGatewayTimeout, typ: "timeout",
			msg: fmt.Sprintf("the replica holding session %s did not answer within %v", rec.ID, ForwardTimeout)}
	case err != nil:
		return nil, err
	}
	return &reply, nil
}

// isConflict says whether err is the 409 of a session held elsewhere.
func isConflict(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusConflict
}
