package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/settings"
)

func TestCheckBypassAsRoot(t *testing.T) {
	for _, tc := range []struct {
		euid    int
		sandbox string
		refused bool
	}{
		{0, "", true}, {0, "0", true}, {0, "true", true}, {0, "1", false},
		{1000, "", false}, {-1, "", false},
	} {
		err := agentloop.CheckBypassAsRoot(tc.euid, tc.sandbox)
		if got := errors.Is(err, agentloop.ErrBypassAsRoot); got != tc.refused {
			t.Errorf("euid %d IS_SANDBOX=%q: err %v, want refused %v", tc.euid, tc.sandbox, err, tc.refused)
		}
		if err != nil && (!strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "IS_SANDBOX=1")) {
			t.Errorf("error %q names neither root nor IS_SANDBOX=1", err)
		}
	}
}

// As root without IS_SANDBOX=1 a session may not start in
// bypassPermissions, whether the option or a settings defaultMode asks
// for it; IS_SANDBOX=1 allows it.
func TestBypassAsRootRefusedAtStart(t *testing.T) {
	t.Cleanup(conversation.ActAsRootForTest())
	for _, tc := range []struct {
		name string
		opts func(*agentloop.Options)
	}{
		{"option", func(o *agentloop.Options) { o.PermissionMode = agentloop.PermissionBypass }},
		{"settings defaultMode", func(o *agentloop.Options) {
			o.Settings = `{"permissions":{"defaultMode":"bypassPermissions"}}`
		}},
	} {
		for _, sandbox := range []string{"", "1"} {
			t.Run(tc.name+"/IS_SANDBOX="+sandbox, func(t *testing.T) {
				t.Setenv("IS_SANDBOX", sandbox)
				srv := agentlooptest.NewTB(t, agentlooptest.Text("Hi."))
				srv.AllowExhausted()
				o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{},
					SettingSources: []settings.SettingSource{}}
				tc.opts(o)
				_, err := agentloop.Query(context.Background(), "go", o).Result()
				if sandbox == "1" {
					if err != nil {
						t.Fatalf("IS_SANDBOX=1: %v", err)
					}
					return
				}
				if !errors.Is(err, agentloop.ErrBypassAsRoot) {
					t.Fatalf("err %v, want ErrBypassAsRoot", err)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent by a refused session", n)
				}
				if _, err := agentloop.NewClient(o); !errors.Is(err, agentloop.ErrBypassAsRoot) {
					t.Errorf("NewClient: err %v, want ErrBypassAsRoot", err)
				}
			})
		}
	}
}

// As root without IS_SANDBOX=1 a running session may not switch to
// bypassPermissions by any path: the switch is refused, the mode stays
// and a tool call whose approval carried the switch does not run.
func TestBypassAsRootRefusedOnSwitch(t *testing.T) {
	t.Cleanup(conversation.ActAsRootForTest())
	t.Setenv("IS_SANDBOX", "")
	for _, sp := range switchPaths {
		t.Run(sp.name, func(t *testing.T) {
			e := newDisableEnv(t, agentlooptest.ToolUse("toolu_1", "act", map[string]any{}), agentlooptest.Text("done"))
			e.write(t)
			result, err := sp.run(t, e, agentloop.PermissionBypass)
			if sp.name == "Client.SetPermissionMode" {
				if !errors.Is(err, agentloop.ErrBypassAsRoot) {
					t.Fatalf("err %v, want ErrBypassAsRoot", err)
				}
				return
			}
			if result == "acted" || !strings.Contains(result, "IS_SANDBOX") {
				t.Errorf("tool result %q, want a refusal naming IS_SANDBOX", result)
			}
		})
	}
}
