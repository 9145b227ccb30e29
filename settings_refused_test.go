package agentloop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// TestSettingsRefusedAtStart: security settings agentloop cannot honour
// stop the session before anything runs, with an error naming the key,
// rather than being accepted and ignored.
func TestSettingsRefusedAtStart(t *testing.T) {
	for _, tc := range []struct{ name, settings, key string }{
		{"workingDirectoriesAsGiven", `{"permissions": {"workingDirectoriesAsGiven": ["/w"]}}`, "permissions.workingDirectoriesAsGiven"},
		{"malformed autoMode", `{"autoMode": {"hard_deny": "not a list"}}`, "autoMode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("should not be asked"))
			_, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil),
				Cwd: t.TempDir(), SettingSources: []settings.SettingSource{}, Settings: tc.settings}).Collect()
			if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("err = %v, want ErrInvalidOption naming %s", err, tc.key)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests, want none", n)
			}
		})
	}
}
