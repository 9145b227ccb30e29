package tool

import (
	"encoding/json"
	"testing"
)

// TestValidateKeepsCompactInput: an input that needs no default comes
// back as the model wrote it when it is compact; otherwise it is
// re-encoded as before (defaults first, whitespace dropped, <>& escaped).
func TestValidateKeepsCompactInput(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{
		"b":{"type":"integer"},"a":{"type":"string"},"n":{"type":"number"},"d":{"type":"string","default":"dflt"}},
		"required":["b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"b":9007199254740993,"a":"x y","d":"set"}`, `{"b":9007199254740993,"a":"x y","d":"set"}`},
		{`{"b":1,"a":"\u00e9","n":1.50,"d":"z"}`, `{"b":1,"a":"\u00e9","n":1.50,"d":"z"}`},
		{`{"b":1, "d":"z"}`, `{"b":1,"d":"z"}`},
		{`{"b":1,"a":"<&>","d":"z"}`, `{"b":1,"a":"\u003c\u0026\u003e","d":"z"}`},
		{`{"b":1}`, `{"d":"dflt","b":1}`},
	} {
		got, err := s.Validate("t", json.RawMessage(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if string(got) != tc.want {
			t.Errorf("Validate(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
