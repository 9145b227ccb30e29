package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/google/go-cmp/cmp"
)

// TestDisableModes: permissions.disableBypassPermissionsMode and
// permissions.disableAutoMode are read into typed fields from every
// source, hold when any source sets them (the highest such source is
// named), and are no longer kept in Permissions.Extra.
func TestDisableModes(t *testing.T) {
	const both = `{"permissions":{"disableBypassPermissionsMode":"disable","disableAutoMode":"disable"}}`
	const bypass = `{"permissions":{"disableBypassPermissionsMode":"disable"}}`
	cases := []struct {
		name       string
		files      map[Source]string
		inline     string // inline --settings JSON
		wantBypass *ModeDisable
		wantAuto   *ModeDisable
	}{
		{"none", nil, "", nil, nil},
		{"user", map[Source]string{UserSettings: both}, "",
			&ModeDisable{UserSettings, "~/.claude/settings.json"}, &ModeDisable{UserSettings, "~/.claude/settings.json"}},
		{"project", map[Source]string{ProjectSettings: both}, "",
			&ModeDisable{ProjectSettings, ".claude/settings.json"}, &ModeDisable{ProjectSettings, ".claude/settings.json"}},
		{"local", map[Source]string{LocalSettings: both}, "",
			&ModeDisable{LocalSettings, ".claude/settings.local.json"}, &ModeDisable{LocalSettings, ".claude/settings.local.json"}},
		{"inline flag", nil, both,
			&ModeDisable{FlagSettings, "--settings"}, &ModeDisable{FlagSettings, "--settings"}},
		{"policy", map[Source]string{PolicySettings: both}, "",
			&ModeDisable{PolicySettings, "POLICY"}, &ModeDisable{PolicySettings, "POLICY"}},
		{"only bypass", map[Source]string{ProjectSettings: bypass}, "",
			&ModeDisable{ProjectSettings, ".claude/settings.json"}, nil},
		// The top-level spelling of disableAutoMode means the same.
		{"top-level disableAutoMode", map[Source]string{UserSettings: `{"disableAutoMode":"disable"}`}, "",
			nil, &ModeDisable{UserSettings, "~/.claude/settings.json"}},
		// A lower file's "disable" is not undone by a higher file that
		// leaves the key out or sets it to null.
		{"higher file silent", map[Source]string{UserSettings: both,
			LocalSettings: `{"permissions":{"disableBypassPermissionsMode":null,"allow":["Read"]}}`}, `{"permissions":{}}`,
			&ModeDisable{UserSettings, "~/.claude/settings.json"}, &ModeDisable{UserSettings, "~/.claude/settings.json"}},
		{"highest source named", map[Source]string{UserSettings: both, ProjectSettings: bypass, PolicySettings: bypass}, "",
			&ModeDisable{PolicySettings, "POLICY"}, &ModeDisable{UserSettings, "~/.claude/settings.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for src, body := range tc.files {
				write(t, e.path(src), body)
			}
			o := e.opts()
			o.Flag = tc.inline
			s, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []*ModeDisable{tc.wantBypass, tc.wantAuto} {
				if w != nil && w.File == "POLICY" {
					w.File = e.managed
				}
			}
			got := []*ModeDisable{s.Permissions.DisableBypassPermissionsMode, s.Permissions.DisableAutoMode}
			if diff := cmp.Diff([]*ModeDisable{tc.wantBypass, tc.wantAuto}, got); diff != "" {
				t.Errorf("bypass, auto (-want +got):\n%s", diff)
			}
			if len(s.Permissions.Extra) != 0 {
				t.Errorf("Permissions.Extra = %s, want it empty", s.Permissions.Extra)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings %q", s.Warnings)
			}
		})
	}
}

// TestDisableModesBadValue: a value other than "disable" is an error
// naming the file and the key, as for permissions.defaultMode; in the user
// file it is a warning and the file is left out whole.
func TestDisableModesBadValue(t *testing.T) {
	for _, key := range []string{"disableBypassPermissionsMode", "disableAutoMode"} {
		for _, v := range []string{`"disabled"`, `"enable"`, `true`, `""`} {
			t.Run(key+"="+v, func(t *testing.T) {
				body := `{"permissions":{"` + key + `":` + v + `}}`
				e := newEnv(t)
				write(t, e.path(ProjectSettings), body)
				_, err := Load(e.opts())
				var se *Error
				if !errors.As(err, &se) || se.File != ".claude/settings.json" || se.Field != "permissions."+key {
					t.Fatalf("project file: error %v, want one naming .claude/settings.json and permissions.%s", err, key)
				}
				if v[0] == '"' && (!errors.Is(err, ErrUnknownValue) || !strings.Contains(err.Error(), "(want disable)")) {
					t.Errorf("project file: error %v does not wrap ErrUnknownValue listing disable", err)
				}
				var uv *vocab.UnknownValueError
				if v[0] == '"' && (!errors.As(err, &uv) || `"`+uv.Value+`"` != v) {
					t.Errorf("project file: error %#v does not carry the value %s", err, v)
				}

				e = newEnv(t)
				write(t, e.path(UserSettings), body)
				s, err := Load(e.opts())
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "~/.claude/settings.json: permissions."+key+": ") {
					t.Errorf("user file: warnings %q, want one naming the file and the key", s.Warnings)
				}
			})
		}
	}
}
