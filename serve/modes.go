package serve

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agentloop/agentloop"
)

// DefaultAllowedModes are the permission modes a tenant may ask for when
// Config.AllowModes names no others: the ones that ask, or refuse, what
// the rules do not allow. bypassPermissions and auto, which run calls
// nobody approved, are the operator's to grant.
var DefaultAllowedModes = []agentloop.PermissionMode{agentloop.PermissionDefault, agentloop.PermissionAcceptEdits,
	agentloop.PermissionPlan, agentloop.PermissionDontAsk}

// modeAllowed says whether a tenant may ask for mode ("" is the
// operator's default, always allowed; a mode that does not parse is the
// caller's 400).
func (s *Server) modeAllowed(mode string) bool {
	if mode == "" {
		return true
	}
	m, err := agentloop.ParsePermissionMode(mode)
	if err != nil {
		return true
	}
	return slices.Contains(DefaultAllowedModes, m) || slices.Contains(s.cfg.AllowModes, m)
}

// checkMode answers 403 for a mode the operator did not allow.
func (s *Server) checkMode(mode string) error {
	if s.modeAllowed(mode) {
		return nil
	}
	allowed := slices.Concat(DefaultAllowedModes, s.cfg.AllowModes)
	names := make([]string, len(allowed))
	for i, m := range allowed {
		names[i] = string(m)
	}
	return &apiError{status: http.StatusForbidden, typ: "forbidden",
		msg: fmt.Sprintf("permission_mode %s is not allowed on this server (allowed: %s; the operator grants more with --allow-modes)",
			mode, strings.Join(names, ", "))}
}
