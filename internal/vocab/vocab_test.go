package vocab

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseCase is one input to a vocabulary's Parse function: want is the
// parsed value, or, when errText is set, the error's exact text.
type parseCase struct {
	in, want, errText string
}

func checkParse[T ~string](t *testing.T, parse func(string) (T, error), cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		got, err := parse(c.in)
		if c.errText != "" {
			if err == nil || err.Error() != c.errText {
				t.Errorf("Parse(%q) = %q, %v; want error %q", c.in, got, err, c.errText)
			}
			if !errors.Is(err, ErrUnknownValue) {
				t.Errorf("Parse(%q): error %v does not match ErrUnknownValue", c.in, err)
			}
			var uv *UnknownValueError
			if !errors.As(err, &uv) || uv.Value != c.in {
				t.Errorf("Parse(%q): error %#v is not an *UnknownValueError naming the value", c.in, err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParsePermissionMode(t *testing.T) {
	const want = " (want default, acceptEdits, bypassPermissions, plan, dontAsk or auto)"
	checkParse(t, ParsePermissionMode, []parseCase{
		{in: "default", want: "default"},
		{in: "acceptEdits", want: "acceptEdits"},
		{in: "bypassPermissions", want: "bypassPermissions"},
		{in: "plan", want: "plan"},
		{in: "dontAsk", want: "dontAsk"},
		{in: "auto", want: "auto"},
		{in: "manual", want: "default"},
		{in: "", errText: `unknown permission mode ""` + want},
		{in: "yolo", errText: `unknown permission mode "yolo"` + want},
		{in: "AcceptEdits", errText: `unknown permission mode "AcceptEdits"` + want},
	})
}

func TestParseEffort(t *testing.T) {
	const want = " (want low, medium, high, xhigh or max)"
	checkParse(t, ParseEffort, []parseCase{
		{in: "low", want: "low"},
		{in: "medium", want: "medium"},
		{in: "high", want: "high"},
		{in: "xhigh", want: "xhigh"},
		{in: "max", want: "max"},
		{in: "", errText: `unknown effort ""` + want},
		{in: "extreme", errText: `unknown effort "extreme"` + want},
	})
}

func TestParseThinking(t *testing.T) {
	checkParse(t, ParseThinkingType, []parseCase{
		{in: "adaptive", want: "adaptive"},
		{in: "enabled", want: "enabled"},
		{in: "disabled", want: "disabled"},
		{in: "on", errText: `unknown thinking type "on" (want adaptive, enabled or disabled)`},
	})
	checkParse(t, ParseThinkingDisplay, []parseCase{
		{in: "summarized", want: "summarized"},
		{in: "omitted", want: "omitted"},
		{in: "updates", errText: `unknown thinking display "updates" (want summarized or omitted)`},
	})
}

func TestParseBehavior(t *testing.T) {
	checkParse(t, ParseBehavior, []parseCase{
		{in: "allow", want: "allow"},
		{in: "deny", want: "deny"},
		{in: "ask", want: "ask"},
		{in: "maybe", errText: `unknown behavior "maybe" (want allow, deny or ask)`},
	})
}

func TestSetListsAndEnum(t *testing.T) {
	if diff := cmp.Diff([]string{"low", "medium", "high", "xhigh", "max"}, Efforts.Strings()); diff != "" {
		t.Errorf("Efforts.Strings() (-want +got):\n%s", diff)
	}
	if got := Efforts.Want(); got != "low, medium, high, xhigh or max" {
		t.Errorf("Efforts.Want() = %q", got)
	}
	var enum struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
	}
	if err := json.Unmarshal(Efforts.Enum(), &enum); err != nil {
		t.Fatalf("Enum() is not JSON: %v", err)
	}
	if diff := cmp.Diff(Efforts.Strings(), enum.Enum); enum.Type != "string" || diff != "" {
		t.Errorf("Enum() = %s (-want +got):\n%s", Efforts.Enum(), diff)
	}
	// The alias is accepted but never listed.
	if PermissionModes.Contains("manual") {
		t.Error(`PermissionModes lists "manual"`)
	}
	v := PermissionModes.Values()
	v[0] = "changed"
	if PermissionModes.Values()[0] != PermissionDefault {
		t.Error("Values() shares its slice with the set")
	}
}
