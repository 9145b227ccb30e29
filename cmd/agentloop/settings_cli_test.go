package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestSettingsFiles: settings files with a UTF-8 byte order mark are
// read, and a malformed ~/.claude/settings.json is reported and left out
// while the run goes on.
func TestSettingsFiles(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	cases := []struct {
		name       string
		user       string // ~/.claude/settings.json, "" for none
		flagFile   string // a --settings file, "" for none
		wantModel  string
		wantStderr []string
	}{
		{"flag file with a byte order mark", "", bom + `{"model":"claude-haiku-5-5"}`, "claude-haiku-5-5", nil},
		{"user file with a byte order mark", bom + `{"model":"claude-sonnet-5-5"}`, "", "claude-sonnet-5-5", nil},
		{"user file not JSON", `{"model":"claude-sonnet-5-5",}`, "", "",
			[]string{"agentloop: warning: ~/.claude/settings.json: invalid JSON at line 1, column 30", "ignored until it is fixed"}},
		{"user file with a bad field", `{"model":"claude-sonnet-5-5","permissions":{"allow":[7]}}`, "", "",
			[]string{"agentloop: warning: ~/.claude/settings.json: permissions.allow[0]: want a string, got number"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			if tc.user != "" {
				if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(tc.user), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"-p", "hi"}
			if tc.flagFile != "" {
				p := filepath.Join(t.TempDir(), "flag.json")
				if err := os.WriteFile(p, []byte(tc.flagFile), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--settings", p)
			}
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			code, out, errOut := runCLI(t, srv, "", args...)
			if code != 0 || out != "ok\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if got := srv.Requests()[0].Params.Model; tc.wantModel != "" && got != tc.wantModel {
				t.Errorf("model %q, want %q from the settings file", got, tc.wantModel)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q, want %q in it", errOut, w)
				}
			}
			if tc.wantStderr == nil && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
		})
	}
}

// TestExitCodes: the command's exit codes, as the reference CLI's: 0 for
// success (and --help, --version), 1 for an error result, a failure to
// start and a bad command line alike. Signals: TestSignalExitCodes.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name  string
		reply []agentlooptest.Reply
		args  []string
		want  int
	}{
		{"success", []agentlooptest.Reply{agentlooptest.Text("ok")}, []string{"-p", "hi"}, 0},
		{"help", nil, []string{"--help"}, 0},
		{"version", nil, []string{"--version"}, 0},
		{"error result", []agentlooptest.Reply{agentlooptest.Error(400, "invalid_request_error", "no")}, []string{"-p", "hi"}, 1},
		{"unknown flag", nil, []string{"-p", "hi", "--frobnicate"}, 1},
		{"bad flag value", nil, []string{"-p", "hi", "--max-turns", "0"}, 1},
		{"two prompts", nil, []string{"-p", "one", "two"}, 1},
		{"bad settings", nil, []string{"-p", "hi", "--settings", "{"}, 1},
		{"unknown session", nil, []string{"-p", "hi", "--resume", "00000000-0000-4000-8000-000000000001"}, 1},
		{"bad schema", nil, []string{"-p", "hi", "--json-schema", "{"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, tc.reply...)
			if code, out, errOut := runCLI(t, srv, "", tc.args...); code != tc.want {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, tc.want, out, errOut)
			}
		})
	}
	if !strings.Contains(usageText(), "Exit status: "+exitStatusText) {
		t.Error("--help does not document the exit status")
	}
}
