package permission

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyRecordings replays the permission outcomes of the reference's
// recordings (d_bash_echo, d2_bash_default_mode, f1_write_denied_default,
// e_edit_accept_edits, b_read_file) through the Policy entry point the
// root package uses.
func TestPolicyRecordings(t *testing.T) {
	cwd := t.TempDir()
	in := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	tests := []struct {
		name       string
		policy     Policy
		tool       string
		input      json.RawMessage
		readOnly   bool
		allow      bool
		reasonType string
		facts      []string // must appear in the message
	}{
		{"echo allowed with Bash", Policy{Allow: []string{"Bash"}}, "Bash", in(map[string]string{"command": "echo hello-oracle"}), false, true, ReasonRule, nil},
		{"echo read-only in default", Policy{}, "Bash", in(map[string]string{"command": "echo read-only-ok"}), false, true, ReasonSubcommands, nil},
		{"touch refused in default", Policy{}, "Bash", in(map[string]string{"command": "touch made.txt"}), false, false, "",
			[]string{"touch", filepath.Join(cwd, "made.txt")}},
		{"Write refused in default", Policy{}, "Write", in(map[string]string{"file_path": filepath.Join(cwd, "out.txt"), "content": "hi\n"}), false, false, "",
			[]string{filepath.Join(cwd, "out.txt")}},
		{"Edit in acceptEdits", Policy{Mode: "acceptEdits"}, "Edit", in(map[string]any{"file_path": filepath.Join(cwd, "config.txt"), "old_string": "a", "new_string": "b", "replace_all": false}), false, true, ReasonMode, nil},
		{"Read in default", Policy{}, "Read", in(map[string]string{"file_path": filepath.Join(cwd, "config.txt")}), true, true, ReasonMode, nil},
		{"deny rule", Policy{Allow: []string{"Bash"}, Deny: []string{"Bash(rm:*)"}}, "Bash", in(map[string]string{"command": "rm -rf x"}), false, false, ReasonRule, []string{"rm -rf x", "Bash(rm:*)"}},
		{"malformed rule skipped", Policy{Allow: []string{"Bash(", "Read"}}, "Bash", in(map[string]string{"command": "npm test"}), false, false, "", []string{"npm test"}},
		{"unknown read-only tool", Policy{}, "CustomLookup", in(map[string]string{}), true, true, ReasonMode, nil},
		{"plan", Policy{Mode: "plan", Allow: []string{"Edit"}}, "Write", in(map[string]string{"file_path": filepath.Join(cwd, "x"), "content": ""}), false, false, "", []string{"Write"}},
		{"bypass", Policy{Mode: "bypassPermissions"}, "Bash", in(map[string]string{"command": "npm publish"}), false, true, ReasonMode, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.policy.Dirs = []string{cwd}
			got := tt.policy.Check(tt.tool, tt.input, tt.readOnly)
			if got.Allow != tt.allow || got.ReasonType != tt.reasonType {
				t.Errorf("got %+v, want allow=%v reason=%q", got, tt.allow, tt.reasonType)
			}
			for _, f := range tt.facts {
				if !strings.Contains(got.Message, f) {
					t.Errorf("message %q lacks %q", got.Message, f)
				}
			}
		})
	}
}
