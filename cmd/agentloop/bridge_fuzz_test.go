package main

import (
	"encoding/json"
	"testing"
)

// FuzzDecodePermissionAnswer: any answer decodes to an allow or a deny,
// or fails; never a panic, and never a result with another behaviour.
func FuzzDecodePermissionAnswer(f *testing.F) {
	for _, s := range []string{
		`{"behavior":"allow"}`,
		`{"behavior":"allow","updatedInput":{"a":1},"updatedPermissions":[{"type":"setMode","mode":"plan","destination":"session"}],"toolUseID":"t"}`,
		`{"behavior":"deny","message":"no","interrupt":true}`,
		`{"behavior":"allow","updatedPermissions":null}`,
		`{"behavior":"allow","updatedPermissions":[{}]}`,
		`[]`, `null`, `{"behavior":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, _, err := decodePermissionAnswer(json.RawMessage(s), "t")
		if err != nil {
			return
		}
		switch res.Behavior {
		case "allow":
			if res.Message != "" || res.Interrupt {
				t.Errorf("%s: an allow with deny fields: %+v", s, res)
			}
		case "deny":
			if res.UpdatedInput != nil || res.UpdatedPermissions != nil {
				t.Errorf("%s: a deny with allow fields: %+v", s, res)
			}
		default:
			t.Errorf("%s: behaviour %q", s, res.Behavior)
		}
	})
}

// FuzzDecodeHookAnswer: any answer decodes or fails, without a panic; a
// decoded answer encodes again.
func FuzzDecodeHookAnswer(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"continue":false,"stopReason":"x"}`, `{"decision":"block","reason":"r"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"a":1}}}`,
		`[]`, `null`, `{"decision":7}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := decodeHookAnswer(json.RawMessage(s))
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Errorf("%s: decoded output does not encode: %v", s, err)
		}
	})
}
