package serve_test

import (
	"net/http"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/serve"
)

// allowBypass lets tenants ask for bypassPermissions (Config.AllowModes).
func allowBypass(c *serve.Config) {
	c.AllowModes = append(c.AllowModes, agentloop.PermissionBypass)
}

// The modes a tenant may ask for are the operator's: bypassPermissions and
// auto are refused with 403 unless AllowModes names them; the others
// pass; a mode that does not exist is still a 400.
func TestModeCeiling(t *testing.T) {
	for _, c := range []struct {
		allow []agentloop.PermissionMode
		mode  string
		want  int
	}{
		{nil, "bypassPermissions", http.StatusForbidden},
		{nil, "auto", http.StatusForbidden},
		{nil, "default", http.StatusCreated},
		{nil, "acceptEdits", http.StatusCreated},
		{nil, "plan", http.StatusCreated},
		{nil, "dontAsk", http.StatusCreated},
		{nil, "", http.StatusCreated},
		{nil, "yolo", http.StatusBadRequest},
		{[]agentloop.PermissionMode{agentloop.PermissionBypass}, "bypassPermissions", http.StatusCreated},
		{[]agentloop.PermissionMode{agentloop.PermissionBypass}, "auto", http.StatusForbidden},
	} {
		e := newEnv(t, func(cfg *serve.Config) { cfg.AllowModes = c.allow })
		e.must(c.want, "POST", "/v1/sessions", tokenA, map[string]any{"permission_mode": c.mode})
	}
}
