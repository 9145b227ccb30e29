package conversation_test

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

// TestUnmappedModelEnvReported: the reference's variables that remap
// model aliases, which agentloop does not read, are reported when set
// (from the environment or the settings' env), never silently ignored.
func TestUnmappedModelEnvReported(t *testing.T) {
	for _, c := range []struct{ name, env, settings, want string }{
		{"environment", "ANTHROPIC_SMALL_FAST_MODEL", "", "ANTHROPIC_SMALL_FAST_MODEL"},
		{"settings env", "", `{"env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-1"}}`, "ANTHROPIC_DEFAULT_OPUS_MODEL"},
		{"control: none set", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
				"ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL"} {
				t.Setenv(k, "")
			}
			if c.env != "" {
				t.Setenv(c.env, "claude-haiku-4-5")
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			msgs, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil),
				Cwd: t.TempDir(), SettingSources: []settings.SettingSource{}, Settings: c.settings}).Collect()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				if d, ok := agentloop.DiagnosticOf(m); ok && strings.Contains(d.Text, "not honoured by agentloop: model aliases") {
					got = append(got, d.Text)
				}
			}
			if (c.want == "") != (len(got) == 0) || (c.want != "" && !strings.Contains(strings.Join(got, "\n"), c.want)) {
				t.Errorf("diagnostics %q, want one naming %q", got, c.want)
			}
		})
	}
}
