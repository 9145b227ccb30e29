package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestByteOrderMark: a UTF-8 byte order mark at the start of any settings
// file is not part of the JSON; the file reads as if it were not there.
func TestByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	for _, src := range []Source{UserSettings, ProjectSettings, LocalSettings, FlagSettings, PolicySettings} {
		t.Run(string(src), func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path(src), bom+`{"model":"from-`+string(src)+`"}`)
			o := e.opts()
			if src == FlagSettings {
				o.Flag = e.path(src)
			}
			s, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if s.Model != "from-"+string(src) || len(s.Warnings) != 0 {
				t.Errorf("model %q, warnings %q", s.Model, s.Warnings)
			}
		})
	}
	t.Run("apply", func(t *testing.T) {
		e := newEnv(t)
		write(t, e.path(LocalSettings), bom+`{"model":"m"}`)
		err := Apply(e.opts(), PermissionUpdate{Type: AddRules, Rules: []RuleValue{{ToolName: "Read"}},
			Behavior: Allow, Destination: LocalSettings})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(e.opts())
		if err != nil || s.Model != "m" || len(s.Permissions.Allow) != 1 {
			t.Errorf("after Apply: %v %+v", err, s)
		}
	})
}

// TestMalformedUserFileSkipped: a user settings file that is not valid
// JSON, has a bad field or cannot be read is left out whole with a warning
// that names the problem; the other files still apply. Other sources stay
// errors (TestMalformed).
func TestMalformedUserFileSkipped(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"not JSON", "{\n  \"model\": \"x\",\n}",
			"~/.claude/settings.json: invalid JSON at line 3, column 1: invalid character '}' looking for beginning of object key string (the user settings file is ignored until it is fixed)"},
		{"bad field", `{"model":true,"permissions":{"deny":["Bash"],"allow":[1]}}`,
			"~/.claude/settings.json: model: want a string, got boolean; ~/.claude/settings.json: permissions.allow[0]: want a string, got number (the user settings file is ignored until it is fixed)"},
		{"unreadable", "", "~/.claude/settings.json: is a directory (the user settings file is ignored until it is fixed)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.name == "unreadable" {
				// A directory where the file should be fails to read, even as root.
				if err := os.MkdirAll(e.path(UserSettings), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				write(t, e.path(UserSettings), tc.body)
			}
			write(t, e.path(ProjectSettings), `{"model":"project","permissions":{"allow":["Read"]}}`)
			s, err := Load(e.opts())
			if err != nil {
				t.Fatalf("Load failed: %v", err)
			}
			if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], tc.want) {
				t.Errorf("warnings %q, want one starting %q", s.Warnings, tc.want)
			}
			if s.Model != "project" || len(s.Permissions.Allow) != 1 || len(s.Permissions.Deny) != 0 {
				t.Errorf("model %q allow %v deny %v: the user file was half-applied or the project file lost",
					s.Model, s.Permissions.Allow, s.Permissions.Deny)
			}
			want := []File{{ProjectSettings, filepath.Join(e.cwd, ".claude", "settings.json")}}
			if diff := cmp.Diff(want, s.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("flag file stays an error", func(t *testing.T) {
		e := newEnv(t)
		write(t, e.path(FlagSettings), `{`)
		o := e.opts()
		o.Flag = e.path(FlagSettings)
		if _, err := Load(o); err == nil {
			t.Error("a malformed --settings file loaded")
		}
	})
}
