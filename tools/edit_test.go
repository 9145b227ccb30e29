package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEditInfo(t *testing.T) {
	tl := Edit()
	if info := tl.Info(); info.Name != "Edit" || info.ReadOnly {
		t.Errorf("Info = %+v, want Edit, not read-only", info)
	}
	ftCheckSchema(t, tl, "edit", "file_path", "old_string", "new_string", "replace_all")
}

// TestEditRecorded replays e_edit_accept_edits exactly: Read, then Edit.
func TestEditRecorded(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "config.txt", "color = red\nsize = 3\n")
	env := ftEnv(dir)
	r := ftRun(t, Read(), env, map[string]any{"file_path": p})
	if ftText(r) != "1\tcolor = red\n2\tsize = 3\n3\t" {
		t.Fatalf("Read = %q", ftText(r))
	}
	r = ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "color = red", "new_string": "color = blue"})
	wantText := "The file " + p + " has been updated successfully. (file state is current in your context — no need to Read it back)"
	if r.IsError || ftText(r) != wantText {
		t.Errorf("Edit = %q, want %q", ftText(r), wantText)
	}
	want := `{"filePath":"` + p + `","oldString":"color = red","newString":"color = blue","originalFile":"color = red\nsize = 3\n",` +
		`"structuredPatch":[{"oldStart":1,"oldLines":2,"newStart":1,"newLines":2,"lines":["-color = red","+color = blue"," size = 3"]}],` +
		`"userModified":false,"replaceAll":false}`
	if got := ftStructuredJSON(t, r); got != want {
		t.Errorf("tool_use_result:\n got %s\nwant %s", got, want)
	}
	if data, _ := os.ReadFile(p); string(data) != "color = blue\nsize = 3\n" {
		t.Errorf("file holds %q", data)
	}
}

func TestEditGolden(t *testing.T) {
	dir := ftTempDir(t)
	cases := []struct {
		name     string
		setup    func(e ftSession) string
		old, new string
		all      bool
		want     string // file content afterwards, when the edit succeeds
		wantErr  bool
	}{
		{name: "without_read", setup: func(ftSession) string { return ftWriteFile(t, dir, "plain.txt", "a\nb\nc\n") },
			old: "b", new: "B", want: "a\nB\nc\n"},
		{name: "not_found", setup: func(ftSession) string { return ftWriteFile(t, dir, "nf.txt", "hello\n") },
			old: "goodbye", new: "x", wantErr: true},
		{name: "multiple_matches", setup: func(ftSession) string { return ftWriteFile(t, dir, "multi.txt", "x = 1\nx = 1\nx = 1\n") },
			old: "x = 1", new: "x = 2", wantErr: true},
		{name: "replace_all", setup: func(e ftSession) string {
			p := ftWriteFile(t, dir, "all.txt", "x = 1\ny\nx = 1\n")
			e.read(p)
			return p
		}, old: "x = 1", new: "x = 2", all: true, want: "x = 2\ny\nx = 2\n"},
		{name: "same_strings", setup: func(ftSession) string { return ftWriteFile(t, dir, "same.txt", "s\n") },
			old: "s", new: "s", wantErr: true},
		{name: "missing_file", setup: func(ftSession) string { return filepath.Join(dir, "absent.txt") },
			old: "a", new: "b", wantErr: true},
		{name: "create_with_empty_old", setup: func(ftSession) string { return filepath.Join(dir, "made", "by-edit.txt") },
			old: "", new: "fresh\n", want: "fresh\n"},
		{name: "empty_old_on_existing", setup: func(ftSession) string { return ftWriteFile(t, dir, "full.txt", "content\n") },
			old: "", new: "x", wantErr: true},
		{name: "empty_old_on_empty_file", setup: func(ftSession) string { return ftWriteFile(t, dir, "blank.txt", "") },
			old: "", new: "now something\n", want: "now something\n"},
		{name: "crlf", setup: func(ftSession) string { return ftWriteFile(t, dir, "crlf.txt", "one\r\ntwo\r\nthree\r\n") },
			old: "one\ntwo", new: "uno\ndos\nplus", want: "uno\r\ndos\r\nplus\r\nthree\r\n"},
		{name: "crlf_single_line", setup: func(ftSession) string { return ftWriteFile(t, dir, "crlf1.txt", "a\r\nb\r\n") },
			old: "b", new: "b\nc", want: "a\r\nb\r\nc\r\n"},
		{name: "bom", setup: func(ftSession) string { return ftWriteFile(t, dir, "bom.txt", "\xEF\xBB\xBFkey=1\n") },
			old: "key=1", new: "key=2", want: "\xEF\xBB\xBFkey=2\n"},
		{name: "invalid_utf8_kept", setup: func(ftSession) string { return ftWriteFile(t, dir, "latin1.txt", "caf\xe9\nname=a\n") },
			old: "name=a", new: "name=b", want: "caf\xe9\nname=b\n"},
		{name: "no_trailing_newline", setup: func(ftSession) string { return ftWriteFile(t, dir, "nonl.txt", "first\nlast") },
			old: "last", new: "final", want: "first\nfinal"},
		{name: "delete_line", setup: func(ftSession) string { return ftWriteFile(t, dir, "del.txt", "keep\n\tdrop()\nkeep too\n") },
			old: "\tdrop()", new: "", want: "keep\nkeep too\n"},
		{name: "delete_inside_line", setup: func(ftSession) string { return ftWriteFile(t, dir, "del2.txt", "x := 1 // note\ny\n") },
			old: " // note", new: "", want: "x := 1\ny\n"},
		{name: "modified_since_read", setup: func(e ftSession) string {
			p := ftWriteFile(t, dir, "stale.txt", "v1\n")
			e.read(p)
			ftWriteFile(t, dir, "stale.txt", "v2\n")
			future := time.Now().Add(time.Hour)
			_ = os.Chtimes(p, future, future)
			return p
		}, old: "v", new: "w", wantErr: true},
		{name: "touched_since_read", setup: func(e ftSession) string {
			p := ftWriteFile(t, dir, "touched.txt", "same\n")
			e.read(p)
			future := time.Now().Add(time.Hour)
			_ = os.Chtimes(p, future, future)
			return p
		}, old: "same", new: "changed", want: "changed\n"},
		{name: "notebook", setup: func(ftSession) string { return ftWriteFile(t, dir, "n.ipynb", "{}") },
			old: "{", new: "[", wantErr: true},
		{name: "relative_path", setup: func(ftSession) string { return "x.txt" }, old: "a", new: "b", wantErr: true},
		{name: "directory", setup: func(ftSession) string { return dir }, old: "a", new: "b", wantErr: true},
		{name: "binary", setup: func(ftSession) string { return ftWriteFile(t, dir, "bin.dat", "a\x00b") },
			old: "a", new: "b", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := ftSession{t: t, env: ftEnv(dir)}
			p := tc.setup(env)
			in := map[string]any{"file_path": p, "old_string": tc.old, "new_string": tc.new}
			if tc.all {
				in["replace_all"] = true
			}
			r := ftRun(t, Edit(), env.env, in)
			if r.IsError != tc.wantErr {
				t.Fatalf("is_error = %v, want %v: %s", r.IsError, tc.wantErr, ftText(r))
			}
			ftCheckGolden(t, "edit", tc.name, r, dir)
			if !tc.wantErr {
				if data, _ := os.ReadFile(p); string(data) != tc.want {
					t.Errorf("file holds %q, want %q", data, tc.want)
				}
				patch := r.Structured.(EditResult).StructuredPatch
				orig := ""
				if o := r.Structured.(EditResult).OriginalFile; o != nil {
					orig = *o
				}
				got, ok := applyHunks(orig, patch)
				if wantNorm := normalizeNewlines(string(ftDecoded(tc.want))); !ok || got != wantNorm {
					t.Errorf("patch does not turn the original into the result: ok=%v got %q want %q", ok, got, wantNorm)
				}
			}
		})
	}
}

func ftDecoded(s string) string {
	_, text := decodeText([]byte(s))
	return text
}

func TestEditUTF16(t *testing.T) {
	dir := ftTempDir(t)
	orig := encodeText(encUTF16LE, "name = a\r\nnext\r\n")
	p := ftWriteFile(t, dir, "wide.txt", string(orig))
	r := ftRun(t, Edit(), ftEnv(dir), map[string]any{"file_path": p, "old_string": "name = a", "new_string": "name = b"})
	if r.IsError {
		t.Fatal(ftText(r))
	}
	data, _ := os.ReadFile(p)
	if want := encodeText(encUTF16LE, "name = b\r\nnext\r\n"); string(data) != string(want) {
		t.Errorf("file holds % x, want % x", data, want)
	}
}

// TestEditKeepsPartial checks that an edit after a partial read keeps the
// record partial, and that the file's mode survives.
func TestEditKeepsPartialAndMode(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "big.txt", strings.Repeat("line\n", 10)+"target\n")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	env := ftEnv(dir)
	ftRun(t, Read(), env, map[string]any{"file_path": p, "offset": 11, "limit": 1})
	r := ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "target", "new_string": "hit"})
	if r.IsError || !strings.HasSuffix(ftText(r), stateCurrentNote) {
		t.Fatalf("Edit = %q", ftText(r))
	}
	if rec, _ := fileStateOf(env).get(p); !rec.Partial {
		t.Errorf("record = %+v, want partial", rec)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", fi.Mode().Perm())
	}
	// A second edit in a row needs no new Read.
	r = ftRun(t, Edit(), env, map[string]any{"file_path": p, "old_string": "hit", "new_string": "again"})
	if r.IsError {
		t.Errorf("second Edit = %q", ftText(r))
	}
}

func TestEditReplaceOccurrences(t *testing.T) {
	for _, tc := range []struct {
		text, old, new string
		all            bool
		want           string
	}{
		{"aaa", "a", "b", false, "baa"},
		{"aaa", "a", "b", true, "bbb"},
		{"aaaa", "aa", "a", true, "aa"},
		{"x\ny\nx\n", "x", "", true, "y\n"},
		{"ax\nx\n", "x", "", true, "a\n"},
		{"x\r\ny\r\n", "x", "", false, "y\r\n"},
		{"x", "x", "", false, ""},
		{"a\nb", "\nb", "", false, "a"},
		{"keep b\nb\n", "b", "", true, "keep \n"},
	} {
		if got := replaceOccurrences(tc.text, tc.old, tc.new, tc.all); got != tc.want {
			t.Errorf("replaceOccurrences(%q, %q, %q, %v) = %q, want %q", tc.text, tc.old, tc.new, tc.all, got, tc.want)
		}
	}
}
