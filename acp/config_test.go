package acp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// currentValues are the config options' current values by id.
func currentValues(opts []sdk.SessionConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.Select != nil {
			out[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	return out
}

// TestSetConfigOption: a new session reports its mode, model and effort
// as config options; session/set_config_option changes each, the answer
// reports the new values, and the next request uses them. Unknown ids and
// values are refused.
func TestSetConfigOption(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	r := start(t, srv, t.TempDir(), t.TempDir())
	s := r.newSession()
	if d := cmp.Diff(map[string]string{"mode": "default", "model": "opus", "effort": "auto"}, currentValues(s.ConfigOptions)); d != "" {
		t.Errorf("new session's options (-want +got):\n%s", d)
	}
	ctx := context.Background()
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return r.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: s.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	var last sdk.SetSessionConfigOptionResponse
	for _, kv := range [][2]string{{"mode", "acceptEdits"}, {"model", "haiku"}, {"effort", "low"}} {
		resp, err := set(kv[0], kv[1])
		if err != nil {
			t.Fatalf("set %s=%s: %v", kv[0], kv[1], err)
		}
		last = resp
	}
	if d := cmp.Diff(map[string]string{"mode": "acceptEdits", "model": "haiku", "effort": "low"}, currentValues(last.ConfigOptions)); d != "" {
		t.Errorf("options after setting (-want +got):\n%s", d)
	}
	if _, err := r.prompt(ctx, s.SessionId, "hi"); err != nil {
		t.Fatal(err)
	}
	p := srv.LastRequest().Params
	if p.Model != "claude-haiku-5-5" || p.Output == nil || p.Output.Effort != "low" {
		t.Errorf("request model %q output %+v", p.Model, p.Output)
	}
	for _, kv := range [][2]string{{"colour", "red"}, {"effort", "extreme"}, {"mode", "yolo"}} {
		if _, err := set(kv[0], kv[1]); err == nil || !strings.Contains(errText(err), kv[1]) && !strings.Contains(errText(err), kv[0]) {
			t.Errorf("set %s=%s: %v", kv[0], kv[1], errText(err))
		}
	}
}
