package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContextAmountJSON(t *testing.T) {
	cases := []struct {
		name string
		in   ContextAmount
		json string
	}{
		{"all is a bare string", ContextAmount{Type: "all"}, `"all"`},
		{"counted", ContextAmount{Type: "thinking_turns", Value: 2}, `{"type":"thinking_turns","value":2}`},
		{"tokens", ContextAmount{Type: "input_tokens", Value: 100000}, `{"type":"input_tokens","value":100000}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.json {
				t.Errorf("marshal = %s, want %s", b, c.json)
			}
			var back ContextAmount
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.in, back); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
	// The object form of all is read too; an unknown string is an error.
	var a ContextAmount
	if err := json.Unmarshal([]byte(`{"type":"all"}`), &a); err != nil || a.Type != "all" {
		t.Errorf(`{"type":"all"} = %+v, %v`, a, err)
	}
	if err := json.Unmarshal([]byte(`"some"`), &a); err == nil {
		t.Error(`"some" was accepted`)
	}
	// A whole edit as the reference sends it decodes.
	var e ContextEdit
	if err := json.Unmarshal([]byte(`{"type":"clear_thinking_20251015","keep":"all"}`), &e); err != nil {
		t.Fatalf("reference's edit: %v", err)
	}
	if e.Keep == nil || e.Keep.Type != "all" {
		t.Errorf("keep = %+v", e.Keep)
	}
}
