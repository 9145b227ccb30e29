package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockView is what TestBlockKeys compares.
type blockView struct {
	Writes, Reads, NoPrompt  *Switch
	Exempt, Exclude, AsGiven []string
	Warnings                 []string // substrings, in order
}

// TestBlockKeys: the block switches hold from any source (true wins, the
// highest source is named), denyInsteadOfPrompting is ignored with a
// warning from project and local files, and the path lists are read from
// --settings only, their unusable entries dropped with a warning.
func TestBlockKeys(t *testing.T) {
	const sw = `{"permissions":{"blockWritesOutsideWorkingDirectories":true,"blockReadsOutsideWorkingDirectories":true,"denyInsteadOfPrompting":true}}`
	const lists = `{"permissions":{"blockReadsExemptPaths":["/opt/docs"],"workingDirectoriesExclude":["/p/secret/"],"workingDirectoriesAsGiven":["/w"]}}`
	user := &Switch{UserSettings, "~/.claude/settings.json"}
	project := &Switch{ProjectSettings, ".claude/settings.json"}
	local := &Switch{LocalSettings, ".claude/settings.local.json"}
	flag := &Switch{FlagSettings, "--settings"}
	cases := []struct {
		name   string
		files  map[Source]string
		inline string
		want   blockView
	}{
		{"none", nil, "", blockView{}},
		{"user", map[Source]string{UserSettings: sw}, "", blockView{Writes: user, Reads: user, NoPrompt: user}},
		{"project: no denyInsteadOfPrompting", map[Source]string{ProjectSettings: sw}, "",
			blockView{Writes: project, Reads: project, Warnings: []string{".claude/settings.json: permissions.denyInsteadOfPrompting ignored"}}},
		{"local: no denyInsteadOfPrompting", map[Source]string{LocalSettings: sw}, "",
			blockView{Writes: local, Reads: local, Warnings: []string{".claude/settings.local.json: permissions.denyInsteadOfPrompting ignored"}}},
		{"inline flag", nil, sw, blockView{Writes: flag, Reads: flag, NoPrompt: flag}},
		{"false sets nothing", map[Source]string{UserSettings: strings.ReplaceAll(sw, "true", "false")}, "", blockView{}},
		{"a higher false does not unset", map[Source]string{ProjectSettings: sw,
			LocalSettings: strings.ReplaceAll(sw, "true", "false")}, `{"permissions":{"blockReadsOutsideWorkingDirectories":false}}`,
			blockView{Writes: project, Reads: project, Warnings: []string{"denyInsteadOfPrompting ignored"}}},
		{"highest source named", map[Source]string{UserSettings: sw, LocalSettings: `{"permissions":{"blockWritesOutsideWorkingDirectories":true}}`}, "",
			blockView{Writes: local, Reads: user, NoPrompt: user}},
		{"lists from --settings", nil, lists,
			blockView{Exempt: []string{"/opt/docs"}, Exclude: []string{"/p/secret"}, AsGiven: []string{"/w"}}},
		{"lists elsewhere ignored", map[Source]string{UserSettings: lists, ProjectSettings: lists}, "", blockView{Warnings: []string{
			"~/.claude/settings.json: permissions.blockReadsExemptPaths ignored: it is read from --settings only",
			"~/.claude/settings.json: permissions.workingDirectoriesExclude ignored",
			"~/.claude/settings.json: permissions.workingDirectoriesAsGiven ignored",
			".claude/settings.json: permissions.blockReadsExemptPaths ignored",
			".claude/settings.json: permissions.workingDirectoriesExclude ignored",
			".claude/settings.json: permissions.workingDirectoriesAsGiven ignored",
		}}},
		{"bad entries", nil, `{"permissions":{"workingDirectoriesExclude":["~/x","/a/../b","rel"," /lead","/trail ","/","","/ok","/ok/"]}}`,
			blockView{Exclude: []string{"/ok"}, Warnings: []string{
				`[0] "~/x" ignored: it starts with ~`,
				`[1] "/a/../b" ignored: it has a .. segment`,
				`[2] "rel" ignored: it is not an absolute path`,
				`[3] " /lead" ignored: it has white space`,
				`[4] "/trail " ignored: it has white space`,
				`[5] "/" ignored: it is the root directory`,
				`[6] "" ignored: it is not an absolute path`,
			}}},
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
			p := s.Permissions
			got := blockView{Writes: p.BlockWritesOutsideWorkingDirectories, Reads: p.BlockReadsOutsideWorkingDirectories,
				NoPrompt: p.DenyInsteadOfPrompting, Exempt: p.BlockReadsExemptPaths, Exclude: p.WorkingDirectoriesExclude,
				AsGiven: p.WorkingDirectoriesAsGiven, Warnings: tc.want.Warnings}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(s.Warnings) != len(tc.want.Warnings) {
				t.Fatalf("warnings %q, want %d like %q", s.Warnings, len(tc.want.Warnings), tc.want.Warnings)
			}
			for i, w := range tc.want.Warnings {
				if !strings.Contains(s.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, s.Warnings[i], w)
				}
			}
			if len(p.Extra) != 0 {
				t.Errorf("Permissions.Extra = %s, want it empty", p.Extra)
			}
		})
	}
}

// TestBlockKeysWrongType: a wrong type is an error naming the file and
// the key (in the user file, a warning that leaves the file out).
func TestBlockKeysWrongType(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"permissions":{"blockWritesOutsideWorkingDirectories":"yes"}}`, "permissions.blockWritesOutsideWorkingDirectories: want a boolean, got string"},
		{`{"permissions":{"blockReadsOutsideWorkingDirectories":1}}`, "permissions.blockReadsOutsideWorkingDirectories: want a boolean, got number"},
		{`{"permissions":{"denyInsteadOfPrompting":[]}}`, "permissions.denyInsteadOfPrompting: want a boolean, got array"},
		{`{"permissions":{"blockReadsExemptPaths":"/a"}}`, "permissions.blockReadsExemptPaths: want an array of strings, got string"},
		{`{"permissions":{"workingDirectoriesExclude":[1]}}`, "permissions.workingDirectoriesExclude[0]: want a string, got number"},
		{`{"permissions":{"workingDirectoriesAsGiven":{}}}`, "permissions.workingDirectoriesAsGiven: want an array of strings, got object"},
	} {
		e := newEnv(t)
		write(t, e.path(ProjectSettings), tc.body)
		_, err := Load(e.opts())
		var se *Error
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), ".claude/settings.json: "+tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", tc.body, err, tc.want)
		}
		e = newEnv(t)
		write(t, e.path(UserSettings), tc.body)
		s, err := Load(e.opts())
		if err != nil || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], tc.want) {
			t.Errorf("user %s: err %v, warnings %q", tc.body, err, s.Warnings)
		}
	}
}

// TestUnknownPermissionKeysKept: members this package does not model stay
// in Permissions.Extra (the session reports them as not honoured).
func TestUnknownPermissionKeysKept(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"permissions":{"foo":1,"blockWritesOutsideWorkingDirectories":true}}`)
	s, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"foo"}, keysOf(s.Permissions.Extra)); diff != "" {
		t.Error(diff)
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
