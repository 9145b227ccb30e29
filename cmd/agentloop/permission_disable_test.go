package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestPermissionModeDisabledCLI: --permission-mode bypassPermissions (or
// --dangerously-skip-permissions, or --permission-mode auto) with a
// --settings that turns the mode off exits 1 with an error result naming
// the setting and --settings, and sends nothing; without the setting the
// same command line runs.
func TestPermissionModeDisabledCLI(t *testing.T) {
	const (
		noBypass = `{"permissions":{"disableBypassPermissionsMode":"disable"}}`
		noAuto   = `{"permissions":{"disableAutoMode":"disable"}}`
	)
	cases := []struct {
		name     string
		args     []string
		settings string
		want     string // in stderr and the result's error; "" for a run that succeeds
	}{
		{"bypass disabled", []string{"--permission-mode", "bypassPermissions"}, noBypass,
			`permission mode bypassPermissions is disabled: --settings sets permissions.disableBypassPermissionsMode to "disable"`},
		{"skip permissions disabled", []string{"--dangerously-skip-permissions"}, noBypass,
			`permission mode bypassPermissions is disabled: --settings sets permissions.disableBypassPermissionsMode to "disable"`},
		{"auto disabled", []string{"--permission-mode", "auto"}, noAuto,
			`permission mode auto is disabled: --settings sets permissions.disableAutoMode to "disable"`},
		{"bypass without the setting", []string{"--permission-mode", "bypassPermissions"}, `{"permissions":{}}`, ""},
		{"bypass with only disableAutoMode", []string{"--permission-mode", "bypassPermissions"}, noAuto, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			args := append([]string{"-p", "hi", "--output-format", "json", "--settings", tc.settings}, tc.args...)
			code, out, errOut := runCLI(t, srv, "", args...)
			if tc.want == "" {
				if code != 0 || srv.Len() != 1 {
					t.Errorf("exit %d, %d requests; stdout %q stderr %q", code, srv.Len(), out, errOut)
				}
				return
			}
			if code != 1 || srv.Len() != 0 {
				t.Errorf("exit %d with %d requests sent, want 1 and none", code, srv.Len())
			}
			if errOut != "agentloop: "+tc.want+"\n" {
				t.Errorf("stderr %q, want %q", errOut, "agentloop: "+tc.want+"\n")
			}
			res := decodeStartupResult(t, "json", out)
			if res == nil {
				return
			}
			got := []any{res.Subtype, res.IsError, res.Errors}
			want := []any{"error_during_execution", true, []string{tc.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPermissionModeDisabledControl: a set_permission_mode control request
// for a mode --settings turned off is answered with an error naming the
// setting, and the session stays in its mode; another mode still switches.
func TestPermissionModeDisabledControl(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"))
	s := startSJ(t, srv, "--settings", `{"permissions":{"disableAutoMode":"disable","disableBypassPermissionsMode":"disable"}}`)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	type answer struct {
		Subtype string `json:"subtype"`
		Error   string `json:"error"`
		Mode    string `json:"mode"`
	}
	var got []answer
	for i, mode := range []string{"auto", "bypassPermissions", "acceptEdits"} {
		id := "m" + string(rune('1'+i))
		s.send(`{"request_id":"` + id + `","type":"control_request","request":{"subtype":"set_permission_mode","mode":"` + mode + `"}}`)
		line := s.until(`"request_id":"` + id + `"`)
		var m struct {
			Response struct {
				answer
				Response struct {
					Mode string `json:"mode"`
				} `json:"response"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		a := m.Response.answer
		a.Mode = m.Response.Response.Mode
		got = append(got, a)
	}
	want := []answer{
		{Subtype: "error", Error: `set permission mode: permission mode auto is disabled: --settings sets permissions.disableAutoMode to "disable"`},
		{Subtype: "error", Error: `set permission mode: permission mode bypassPermissions is disabled: --settings sets permissions.disableBypassPermissionsMode to "disable"`},
		{Subtype: "success", Mode: "acceptEdits"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	s.send(userLine("hi"))
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "disable") {
		t.Errorf("stderr %q mentions the settings", s.stderr.String())
	}
}
