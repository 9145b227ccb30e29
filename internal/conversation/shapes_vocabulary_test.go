package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// sentinelNames names the result sentinels for the messages of the tests.
var sentinelNames = map[error]string{
	agentloop.ErrMaxTurns:                   "ErrMaxTurns",
	agentloop.ErrMaxBudget:                  "ErrMaxBudget",
	agentloop.ErrMaxStructuredOutputRetries: "ErrMaxStructuredOutputRetries",
	agentloop.ErrDuringExecution:            "ErrDuringExecution",
	agentloop.ErrAPIError:                   "ErrAPIError",
}

// TestResultSentinels runs into each limit through the public API and
// checks that the error yielded after the error result matches exactly the
// sentinels of its subtype and terminal reason.
func TestResultSentinels(t *testing.T) {
	type echoIn struct {
		Text string `json:"text"`
	}
	echo := agentloop.NewTool("echo", "Echoes text.", func(_ context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.TextResult(in.Text), nil
	}, &agentloop.ToolOptions{ReadOnly: true})
	answer := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	badAnswer := func(id string) agentlooptest.Reply {
		return agentlooptest.ToolUse(id, "StructuredOutput", map[string]any{"city": "Paris"})
	}
	for _, tc := range []struct {
		name    string
		opts    agentloop.Options
		replies []agentlooptest.Reply
		want    []error
	}{
		{"max turns", agentloop.Options{MaxTurns: 1},
			[]agentlooptest.Reply{agentlooptest.ToolUse("toolu_1", "echo", map[string]any{"text": "1"}), agentlooptest.Text("never")},
			[]error{agentloop.ErrMaxTurns}},
		{"max budget", agentloop.Options{MaxBudgetUSD: 0.01},
			[]agentlooptest.Reply{withUsage(agentlooptest.ToolUse("toolu_1", "echo", map[string]any{"text": "1"}), 500000, 100), agentlooptest.Text("never")},
			[]error{agentloop.ErrMaxBudget}},
		{"structured output retries",
			agentloop.Options{OutputFormat: &agentloop.OutputFormat{Type: "json_schema", Schema: answer}, MaxStructuredOutputRetries: 1},
			[]agentlooptest.Reply{badAnswer("toolu_1"), badAnswer("toolu_2"), agentlooptest.Text("never")},
			[]error{agentloop.ErrMaxStructuredOutputRetries}},
		{"api error", agentloop.Options{},
			[]agentlooptest.Reply{agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Text("never")},
			[]error{agentloop.ErrAPIError}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, tc.replies...)
			o := tc.opts
			o.Provider, o.Cwd, o.Tools = provider(t, srv, nil), t.TempDir(), []string{}
			o.CustomTools = []agentloop.Tool{echo}
			o.SettingSources, o.NoSessionPersistence = []settings.SettingSource{}, true
			_, err := agentloop.Query(context.Background(), "go", &o).Result()
			var re *agentloop.ResultError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *ResultError", err)
			}
			for sentinel, name := range sentinelNames {
				want := false
				for _, w := range tc.want {
					want = want || w == sentinel
				}
				if got := errors.Is(err, sentinel); got != want {
					t.Errorf("errors.Is(%v, %s) = %v, want %v", err, name, got, want)
				}
			}
		})
	}
}

// TestInvalidOptionCauses checks that ErrInvalidOption errors wrap their
// cause: the vocabulary error of a bad value, the settings error and the
// JSON syntax error of a malformed settings file.
func TestInvalidOptionCauses(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      agentloop.Options
		value     string // the value an *UnknownValueError names, if any
		wantSyn   bool   // the cause is a *json.SyntaxError
		wantField string // the field a *settings.Error names
	}{
		{name: "permission mode", opts: agentloop.Options{PermissionMode: "yolo"}, value: "yolo"},
		{name: "effort", opts: agentloop.Options{Effort: "extreme"}, value: "extreme"},
		{name: "thinking type", opts: agentloop.Options{Thinking: &agentloop.ThinkingConfig{Type: "on"}}, value: "on"},
		{name: "thinking display", opts: agentloop.Options{Thinking: &agentloop.ThinkingConfig{Type: agentloop.ThinkingAdaptive, Display: "loud"}}, value: "loud"},
		{name: "settings not JSON", opts: agentloop.Options{Settings: `{"permissions": }`}, wantSyn: true},
		{name: "settings mode", opts: agentloop.Options{Settings: `{"permissions": {"defaultMode": "yolo"}}`}, value: "yolo", wantField: "permissions.defaultMode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Provider, o.Cwd = provider(t, agentlooptest.NewTB(t), nil), t.TempDir()
			o.SettingSources, o.NoSessionPersistence = []settings.SettingSource{}, true
			_, err := agentloop.Query(context.Background(), "hi", &o).Result()
			if !errors.Is(err, agentloop.ErrInvalidOption) {
				t.Fatalf("error %v, want ErrInvalidOption", err)
			}
			var uv *agentloop.UnknownValueError
			if got := errors.Is(err, agentloop.ErrUnknownValue) && errors.As(err, &uv) && uv.Value == tc.value; got != (tc.value != "") {
				t.Errorf("error %v: reaches an UnknownValueError for %q: %v, want %v", err, tc.value, got, tc.value != "")
			}
			var syn *json.SyntaxError
			if got := errors.As(err, &syn); got != tc.wantSyn {
				t.Errorf("error %v: reaches a *json.SyntaxError: %v, want %v", err, got, tc.wantSyn)
			}
			var se *settings.Error
			if tc.wantField != "" && (!errors.As(err, &se) || se.Field != tc.wantField) {
				t.Errorf("error %v does not reach the *settings.Error of %s", err, tc.wantField)
			}
		})
	}
}

// TestParseVocabularies checks the root's Parse functions against its
// constants: every listed value parses to itself, the alias to its value,
// and anything else to an error listing the values.
func TestParseVocabularies(t *testing.T) {
	wantModes := []agentloop.PermissionMode{agentloop.PermissionDefault, agentloop.PermissionAcceptEdits,
		agentloop.PermissionBypass, agentloop.PermissionPlan, agentloop.PermissionDontAsk, agentloop.PermissionAuto}
	if diff := cmp.Diff(wantModes, agentloop.PermissionModes()); diff != "" {
		t.Errorf("PermissionModes() (-want +got):\n%s", diff)
	}
	for _, m := range wantModes {
		if got, err := agentloop.ParsePermissionMode(string(m)); got != m || err != nil {
			t.Errorf("ParsePermissionMode(%q) = %q, %v", m, got, err)
		}
	}
	if got, err := agentloop.ParsePermissionMode("manual"); got != agentloop.PermissionDefault || err != nil {
		t.Errorf(`ParsePermissionMode("manual") = %q, %v`, got, err)
	}
	wantEfforts := []string{agentloop.EffortLow, agentloop.EffortMedium, agentloop.EffortHigh, agentloop.EffortXHigh, agentloop.EffortMax}
	if diff := cmp.Diff(wantEfforts, agentloop.Efforts()); diff != "" {
		t.Errorf("Efforts() (-want +got):\n%s", diff)
	}
	for _, bad := range []func() error{
		func() error { _, err := agentloop.ParsePermissionMode("yolo"); return err },
		func() error { _, err := agentloop.ParseEffort("extreme"); return err },
		func() error { _, err := agentloop.ParseThinkingType("on"); return err },
		func() error { _, err := agentloop.ParseThinkingDisplay("loud"); return err },
	} {
		if err := bad(); !errors.Is(err, agentloop.ErrUnknownValue) {
			t.Errorf("bad value: error %v, want ErrUnknownValue", err)
		}
	}
}

// TestManualModeAlias checks that the settings alias "manual" is accepted
// as an option and reported under its canonical name.
func TestManualModeAlias(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), PermissionMode: "manual",
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	msgs, err := agentloop.Query(context.Background(), "hi", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := msgs[0].(*agentloop.SystemMessage); !ok || s.Init == nil || s.Init.PermissionMode != "default" {
		t.Errorf("first message %+v, want init with permission mode default", msgs[0])
	}
}

// TestAgentSchemaEffortEnum checks that the Agent tool offers the model
// exactly the effort levels the options accept.
func TestAgentSchemaEffortEnum(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Agent"},
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	if _, err := agentloop.Query(context.Background(), "hi", o).Result(); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Effort struct {
				Enum []string `json:"enum"`
			} `json:"effort"`
		} `json:"properties"`
	}
	found := false
	for _, tl := range srv.Requests()[0].Params.Tools {
		if tl.Name == "Agent" {
			found = json.Unmarshal(tl.InputSchema, &schema) == nil
		}
	}
	if !found {
		t.Fatal("no Agent tool with a JSON schema in the request")
	}
	if diff := cmp.Diff(agentloop.Efforts(), schema.Properties.Effort.Enum); diff != "" {
		t.Errorf("Agent tool effort enum (-Efforts +schema):\n%s", diff)
	}
}

// TestClientSetEffort checks that a Client parses effort levels like the
// options do.
func TestClientSetEffort(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, e := range append(agentloop.Efforts(), "") {
		if err := c.SetEffort(e); err != nil {
			t.Errorf("SetEffort(%q) = %v", e, err)
		}
	}
	err = c.SetEffort("extreme")
	var uv *agentloop.UnknownValueError
	if !errors.Is(err, agentloop.ErrInvalidOption) || !errors.As(err, &uv) || uv.Value != "extreme" {
		t.Errorf("SetEffort(extreme) = %v, want ErrInvalidOption wrapping the UnknownValueError", err)
	}
}
