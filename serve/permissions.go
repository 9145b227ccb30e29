package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop"
)

// A session's permission requests: published as events, answered over
// HTTP (handlePermission), cancelled when the turn ends.

// canUseTool publishes a permission request and waits for its answer, the
// turn's end (interrupt, delete, drain) or the session's close.
func (l *live) canUseTool(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
	id := "perm_" + uuid.NewString()
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	body := map[string]any{"request_id": id, "tool_name": req.ToolName, "input": input, "tool_use_id": req.ToolUseID}
	if req.DisplayName != "" {
		body["title"] = req.DisplayName
	}
	if req.Description != "" {
		body["description"] = req.Description
	}
	if req.BlockedPath != "" {
		body["blocked_path"] = req.BlockedPath
	}
	p := &pendingPerm{data: rawJSON(body), ch: make(chan agentloop.PermissionResult, 1)}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if l.s.backend.Durable() {
			// The request waits in the backend for the replica that
			// takes the session over.
			return agentloop.PermissionResult{}, fmt.Errorf("permission request: %w", agentloop.ErrClosed)
		}
		return agentloop.Deny("The session is closing."), nil
	}
	l.pending[id] = p
	l.order = append(l.order, id)
	l.mu.Unlock()
	l.s.met.permissionAsks.Add(1)
	l.publish(kindPermissionRequest, p.data)
	l.updateState()
	select {
	case res := <-p.ch:
		return res, nil
	case <-ctx.Done():
		if l.resolve(id, "cancelled") {
			return agentloop.PermissionResult{}, fmt.Errorf("permission request %s: %w", id, context.Cause(ctx))
		}
		return <-p.ch, nil // answered just now
	}
}

// take removes a pending request; nil when it was not pending (handled
// then says whether it was once).
func (l *live) take(id string) (p *pendingPerm, handled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p = l.pending[id]
	if p == nil {
		return nil, l.handled[id]
	}
	delete(l.pending, id)
	for i, o := range l.order {
		if o == id {
			l.order = append(l.order[:i:i], l.order[i+1:]...)
			break
		}
	}
	l.handled[id] = true
	return p, true
}

// resolve removes a pending request and publishes its resolution; false
// when it was not pending.
func (l *live) resolve(id, behavior string) bool {
	if p, _ := l.take(id); p == nil {
		return false
	}
	l.publish(kindPermissionResolved, rawJSON(map[string]string{"request_id": id, "behavior": behavior}))
	l.updateState()
	return true
}

// answer resolves a pending request with res.
func (l *live) answer(id string, res agentloop.PermissionResult) error {
	p, handled := l.take(id)
	if p == nil {
		if handled {
			return &apiError{status: http.StatusConflict, typ: "conflict", msg: fmt.Sprintf("permission request %s was already answered or cancelled", id)}
		}
		return &apiError{status: http.StatusNotFound, typ: "not_found", msg: fmt.Sprintf("no pending permission request %s", id)}
	}
	l.publish(kindPermissionResolved, rawJSON(map[string]string{"request_id": id, "behavior": res.Behavior}))
	p.ch <- res // buffered, and only the taker sends
	l.updateState()
	return nil
}

func (l *live) pendingList() []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []json.RawMessage{}
	for _, id := range l.order {
		out = append(out, l.pending[id].data)
	}
	return out
}
