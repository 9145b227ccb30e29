package engine

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// TestValidateRemembersChecks checks run.validate's memory: one schema
// check per call and input, the checked (defaulted) input answered
// without a second check, a changed input or another call checked anew,
// and a failed check remembered as failed.
func TestValidateRemembersChecks(t *testing.T) {
	schema, err := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":3},"s":{"type":"string"}},"required":["s"]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &toolEntry{schema: schema}
	r := &run{}
	call := func(id, in string) (string, error) {
		out, err := r.validate(e, &model.Content{Type: model.TypeToolUse, ID: id, Name: "T", Input: json.RawMessage(in)})
		return string(out), err
	}
	first, err := call("a", `{"s":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := schema.Validate("T", json.RawMessage(`{"s":"x"}`))
	if first != string(want) {
		t.Fatalf("validate = %s, want what Validate gives: %s", first, want)
	}
	for _, in := range []string{`{"s":"x"}`, first} {
		if got, err := call("a", in); err != nil || got != first {
			t.Errorf("again with %s = %s, %v; want %s", in, got, err, first)
		}
	}
	if len(r.checked) != 1 {
		t.Fatalf("%d checks remembered after three calls with one input, want 1", len(r.checked))
	}
	if _, err := call("a", `{"s":1}`); err == nil {
		t.Error("a changed, invalid input of the same call passed")
	}
	if _, err := call("b", `{}`); err == nil {
		t.Error("another call's invalid input passed")
	}
	if _, err := call("b", `{}`); err == nil {
		t.Error("the remembered failure passed the second time")
	}
	if len(r.checked) != 3 {
		t.Errorf("%d checks remembered, want 3", len(r.checked))
	}
}
