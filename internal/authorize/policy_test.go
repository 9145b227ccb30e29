package authorize

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// TestMCPPolicyAndUserInteraction runs the order with the real checker:
// per-tool policies and requiresUserInteraction against rules, modes,
// hooks and the callback.
func TestMCPPolicyAndUserInteraction(t *testing.T) {
	const name = "mcp__srv__op"
	allowAll := []string{"mcp__srv"}
	type result struct {
		Allow  bool
		Asked  bool
		Reason string // ReasonType of the decision
		Diags  int
	}
	for _, tc := range []struct {
		name      string
		mode      permission.Mode
		allow     []string
		deny      []string
		call      Call
		pre       hooks.Decision
		prAllow   bool // a PermissionRequest hook allows
		canUse    bool // a CanUseTool callback exists (and allows)
		want      result
		wantAsked bool
	}{
		{name: "always_deny beats an allow rule", allow: allowAll, call: Call{Policy: PolicyDeny}, canUse: true,
			want: result{Reason: "rule"}},
		{name: "always_deny beats a hook allow", allow: allowAll, call: Call{Policy: PolicyDeny}, pre: hooks.Allow, canUse: true,
			want: result{Reason: "rule"}},
		{name: "always_deny beats bypass", mode: permission.ModeBypass, call: Call{Policy: PolicyDeny}, canUse: true,
			want: result{Reason: "rule"}},
		{name: "always_ask asks despite an allow rule", allow: allowAll, call: Call{Policy: PolicyAsk}, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "always_ask asks in bypass", mode: permission.ModeBypass, call: Call{Policy: PolicyAsk}, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "always_ask asks despite a hook allow", call: Call{Policy: PolicyAsk}, pre: hooks.Allow, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "always_ask with nobody to ask is denied", allow: allowAll, call: Call{Policy: PolicyAsk},
			want: result{Reason: "other"}},
		{name: "always_ask in dontAsk is denied", mode: permission.ModeDontAsk, allow: allowAll, call: Call{Policy: PolicyAsk}, canUse: true,
			want: result{Reason: "other"}},
		{name: "always_ask answered by a PermissionRequest hook", call: Call{Policy: PolicyAsk}, prAllow: true,
			want: result{Allow: true, Reason: "hook"}},
		{name: "always_ask loses to a deny rule", deny: []string{name}, call: Call{Policy: PolicyAsk}, canUse: true,
			want: result{Reason: "rule"}},
		{name: "always_allow allows without a rule", call: Call{Policy: PolicyAllow},
			want: result{Allow: true, Reason: "rule"}},
		{name: "always_allow allows in dontAsk", mode: permission.ModeDontAsk, call: Call{Policy: PolicyAllow},
			want: result{Allow: true, Reason: "rule"}},
		{name: "always_allow loses to a deny rule", deny: []string{name}, call: Call{Policy: PolicyAllow}, canUse: true,
			want: result{Reason: "rule"}},
		{name: "no policy, no rule: denied with nobody to ask", call: Call{},
			want: result{Reason: "mode"}},
		{name: "requiresUserInteraction asks despite an allow rule", allow: allowAll, call: Call{RequiresUserInteraction: true}, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "requiresUserInteraction asks despite a hook allow", allow: allowAll, call: Call{RequiresUserInteraction: true}, pre: hooks.Allow, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "requiresUserInteraction asks in bypass", mode: permission.ModeBypass, call: Call{RequiresUserInteraction: true}, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user"}},
		{name: "requiresUserInteraction with nobody to ask is denied", allow: allowAll, call: Call{RequiresUserInteraction: true}, pre: hooks.Allow,
			want: result{Reason: "other"}},
		{name: "requiresUserInteraction in dontAsk is denied", mode: permission.ModeDontAsk, allow: allowAll, call: Call{RequiresUserInteraction: true}, canUse: true,
			want: result{Reason: "other"}},
		{name: "requiresUserInteraction: a PermissionRequest allow is not enough", call: Call{RequiresUserInteraction: true}, prAllow: true, canUse: true,
			want: result{Allow: true, Asked: true, Reason: "user", Diags: 1}},
		{name: "requiresUserInteraction beats always_allow", call: Call{RequiresUserInteraction: true, Policy: PolicyAllow},
			want: result{Reason: "other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ck, err := permission.New(permission.Config{Mode: tc.mode, Dirs: []string{t.TempDir()}, AllowBypass: true,
				Rules: permission.RuleSet{Sources: []permission.SourceRules{{Source: permission.SourceCLI, Allow: tc.allow, Deny: tc.deny}}}})
			if err != nil {
				t.Fatal(err)
			}
			var got result
			a := &Authorizer{
				PreToolUse: func(context.Context, Call) hooks.PreToolUseResult { return hooks.PreToolUseResult{Decision: tc.pre} },
				Checker:    ck,
				PermissionRequest: func(context.Context, Call, json.RawMessage, []settings.PermissionUpdate) hooks.PermissionRequestResult {
					if tc.prAllow {
						return hooks.PermissionRequestResult{Decision: hooks.Allow}
					}
					return hooks.PermissionRequestResult{}
				},
				Diag: func(string) { got.Diags++ },
			}
			if tc.canUse {
				a.CanUseTool = func(context.Context, Request) (Answer, error) {
					got.Asked = true
					return Answer{Behavior: "allow"}, nil
				}
			}
			call := tc.call
			call.ID, call.Name, call.Input = "toolu_1", name, json.RawMessage(`{}`)
			o := a.Decide(context.Background(), &call)
			got.Allow, got.Reason = o.Allow, o.ReasonType
			if call.Policy == PolicyAsk && !o.Allow && o.ReasonType == "other" && !strings.Contains(o.Message, "always_ask") {
				t.Errorf("denial message %q does not name the always_ask policy", o.Message)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nmessage: %s", diff, o.Message)
			}
		})
	}
}
