package serve

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agentloop/agentloop"
)

// handleMode changes a session's permission mode (POST …/mode,
// {"mode": "plan"}), within the modes the operator allows: on the replica
// holding it (forwarded there from any other), and in its record, so
// that it opens in that mode on any replica.
func (s *Server) handleMode(w http.ResponseWriter, r *http.Request, t Tenant) {
	rec, err := s.loadRecord(r.Context(), t.ID, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	var req struct {
		Mode string `json:"mode"`
	}
	if err := s.decode(w, r, &req, false); err != nil {
		s.fail(w, err)
		return
	}
	if _, err := agentloop.ParsePermissionMode(req.Mode); err != nil || req.Mode == "" {
		s.fail(w, badRequest("mode %q: want one of %v", req.Mode, agentloop.PermissionModes()))
		return
	}
	if err := s.checkMode(req.Mode); err != nil {
		s.fail(w, err)
		return
	}
	if l := s.getLive(rec.ID); l != nil {
		status, body := l.setMode(r.Context(), req.Mode)
		writeRaw(w, status, body)
		return
	}
	if reply, err := s.viaHolder(r.Context(), rec, controlRequest{Op: opMode, Mode: req.Mode}); err != nil {
		s.fail(w, err)
		return
	} else if reply != nil {
		writeRaw(w, reply.Status, reply.Body)
		return
	}
	if err := s.storeMode(r.Context(), rec.Tenant, rec.ID, req.Mode); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"permission_mode": req.Mode})
}

// setMode changes the mode of the session open here and stores it.
func (l *live) setMode(ctx context.Context, mode string) (int, []byte) {
	if err := l.conn.SetPermissionMode(ctx, agentloop.PermissionMode(mode)); err != nil {
		return errorBody(badRequest("mode %s: %v", mode, err))
	}
	if err := l.s.storeMode(ctx, l.tenant.ID, l.id, mode); err != nil {
		return errorBody(err)
	}
	return http.StatusOK, rawJSON(map[string]string{"permission_mode": mode})
}

// storeMode writes mode into the session's stored options.
func (s *Server) storeMode(ctx context.Context, tenant, id, mode string) error {
	if err := s.writeRecord(ctx, tenant, id, record{Options: &sessionOptions{PermissionMode: mode}}); err != nil {
		return fmt.Errorf("serve: storing the mode of %s: %w", id, err)
	}
	return nil
}

// writeRaw writes a JSON body as it is.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
