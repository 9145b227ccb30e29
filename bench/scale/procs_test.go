package main

import (
	"testing"
)

func TestCheckResult(t *testing.T) {
	tests := []struct {
		name, stdout string
		ok           bool
	}{
		{"the answer", `{"type":"result","subtype":"success","is_error":false,"result":"done"}` + "\n", true},
		{"ended early", `{"type":"result","subtype":"success","is_error":false,"result":"ok"}`, false},
		{"error result", `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400"}`, false},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":true}`, false},
		{"not JSON", `Error: no credentials`, false},
	}
	for _, tt := range tests {
		if err := checkResult([]byte(tt.stdout)); (err == nil) != tt.ok {
			t.Errorf("%s: checkResult = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
