package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/tool"
)

func TestWriteInfo(t *testing.T) {
	tl := Write()
	if info := tl.Info(); info.Name != "Write" || info.ReadOnly {
		t.Errorf("Info = %+v, want Write, not read-only", info)
	}
	ftCheckSchema(t, tl, "write", "file_path", "content")
}

// TestWriteRecorded replays e3_write_new_file_accept_edits exactly.
func TestWriteRecorded(t *testing.T) {
	dir := ftTempDir(t)
	p := filepath.Join(dir, "notes", "out.txt")
	r := ftRun(t, Write(), ftEnv(dir), map[string]any{"file_path": p, "content": "hi\n"})
	wantText := "File created successfully at: " + p + " (file state is current in your context — no need to Read it back)"
	if r.IsError || ftText(r) != wantText {
		t.Errorf("Write = %q, want %q", ftText(r), wantText)
	}
	want := `{"type":"create","filePath":"` + p + `","content":"hi\n","structuredPatch":[],"originalFile":null,"userModified":false}`
	if got := ftStructuredJSON(t, r); got != want {
		t.Errorf("tool_use_result:\n got %s\nwant %s", got, want)
	}
	if data, _ := os.ReadFile(p); string(data) != "hi\n" {
		t.Errorf("file holds %q", data)
	}
}

func TestWriteGolden(t *testing.T) {
	dir := ftTempDir(t)
	cases := []struct {
		name    string
		setup   func(env ftSession) string
		content string
		want    string // file content afterwards, when the write succeeds
		wantErr bool
	}{
		{name: "create_nested", setup: func(ftSession) string { return filepath.Join(dir, "a", "b", "new.txt") },
			content: "first\nsecond\n", want: "first\nsecond\n"},
		{name: "overwrite", setup: func(ftSession) string {
			return ftWriteFile(t, dir, "over.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n")
		}, content: "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\n", want: "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\n"},
		{name: "overwrite_after_read", setup: func(e ftSession) string {
			p := ftWriteFile(t, dir, "read-first.txt", "old\n")
			e.read(p)
			return p
		}, content: "new\n", want: "new\n"},
		{name: "keeps_bom", setup: func(ftSession) string { return ftWriteFile(t, dir, "bom.txt", "\xEF\xBB\xBFold\n") },
			content: "new\n", want: "\xEF\xBB\xBFnew\n"},
		{name: "crlf_content_as_given", setup: func(ftSession) string { return ftWriteFile(t, dir, "crlf.txt", "a\r\nb\r\n") },
			content: "a\nc\n", want: "a\nc\n"},
		{name: "no_trailing_newline", setup: func(ftSession) string { return ftWriteFile(t, dir, "nonl.txt", "x\ny") },
			content: "x\nz", want: "x\nz"},
		{name: "modified_since_read", setup: func(e ftSession) string {
			p := ftWriteFile(t, dir, "stale.txt", "v1\n")
			e.read(p)
			future := time.Now().Add(time.Hour)
			ftWriteFile(t, dir, "stale.txt", "v2 from someone else\n")
			_ = os.Chtimes(p, future, future)
			return p
		}, content: "mine\n", wantErr: true},
		{name: "relative_path", setup: func(ftSession) string { return "rel/out.txt" }, content: "x", wantErr: true},
		{name: "directory", setup: func(ftSession) string { return dir }, content: "x", wantErr: true},
		{name: "parent_is_file", setup: func(ftSession) string {
			ftWriteFile(t, dir, "plain", "x")
			return filepath.Join(dir, "plain", "child.txt")
		}, content: "x", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := ftSession{t: t, env: ftEnv(dir)}
			p := tc.setup(env)
			r := ftRun(t, Write(), env.env, map[string]any{"file_path": p, "content": tc.content})
			if r.IsError != tc.wantErr {
				t.Fatalf("is_error = %v, want %v: %s", r.IsError, tc.wantErr, ftText(r))
			}
			ftCheckGolden(t, "write", tc.name, r, dir)
			if !tc.wantErr {
				if data, _ := os.ReadFile(p); string(data) != tc.want {
					t.Errorf("file holds %q, want %q", data, tc.want)
				}
			}
		})
	}
}

func TestWriteKeepsMode(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	r := ftRun(t, Write(), ftEnv(dir), map[string]any{"file_path": p, "content": "#!/bin/sh\necho hi\n"})
	if r.IsError {
		t.Fatal(ftText(r))
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want 0750", fi.Mode().Perm())
	}
}

// TestWriteThenEdit checks that a write counts as knowing the file: a later
// Edit says the state is current, and an outside change is caught.
func TestWriteThenEdit(t *testing.T) {
	dir := ftTempDir(t)
	env := ftEnv(dir)
	p := filepath.Join(dir, "w.txt")
	ftRun(t, Write(), env, map[string]any{"file_path": p, "content": "alpha\n"})
	r := ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "alpha", "new_string": "beta"})
	if r.IsError || !strings.HasSuffix(ftText(r), stateCurrentNote) {
		t.Errorf("Edit after Write = %q", ftText(r))
	}
	ftWriteFile(t, dir, "w.txt", "changed elsewhere\n")
	future := time.Now().Add(time.Hour)
	_ = os.Chtimes(p, future, future)
	r = ftRun(t, Write(), env, map[string]any{"file_path": p, "content": "x"})
	if !r.IsError || !strings.Contains(ftText(r), "Read it again") {
		t.Errorf("Write over an outside change = %q", ftText(r))
	}
}

// ftSession bundles a session with helpers for test setups.
type ftSession struct {
	t   *testing.T
	env *tool.Env
}

func (e ftSession) read(p string) {
	e.t.Helper()
	if r := ftRun(e.t, Read(), e.env, map[string]any{"file_path": p}); r.IsError {
		e.t.Fatalf("Read(%s): %s", p, ftText(r))
	}
}
