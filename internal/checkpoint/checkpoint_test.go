//go:build unix

package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tree is a temporary work tree and a store beside it.
type tree struct {
	t     *testing.T
	root  string // the work tree, physical
	out   string // a directory outside the tree, physical
	store *Store
}

func newTree(t *testing.T) *tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "work"), filepath.Join(base, "outside")
	for _, d := range []string{root, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(filepath.Join(base, "history"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &tree{t: t, root: root, out: out, store: s}
}

func (tr *tree) path(rel string) string { return filepath.Join(tr.root, rel) }

func (tr *tree) begin(id string) {
	tr.t.Helper()
	if err := tr.store.Begin(id); err != nil {
		tr.t.Fatal(err)
	}
}

// write is what a file tool does: a snapshot, then the change.
func (tr *tree) write(rel, content string, mode fs.FileMode) {
	tr.t.Helper()
	p := tr.path(rel)
	if err := tr.store.Snapshot(p); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		tr.t.Fatal(err)
	}
}

// plain puts a file in the tree without a snapshot (the user's own file).
func (tr *tree) plain(rel, content string) {
	tr.t.Helper()
	p := tr.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// files lists the regular files and links under dir, relative, with
// their content ("-> target" for a link) and, for files, their mode.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		data, err := os.ReadFile(p)
		fi, _ := d.Info()
		out[rel] = fi.Mode().Perm().String() + " " + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRewind(t *testing.T) {
	type want struct {
		res     Result // paths relative to the tree ("out:" prefix: outside)
		tree    map[string]string
		outside map[string]string
	}
	cases := []struct {
		name   string
		script func(tr *tree)
		id     string
		dry    bool
		want   want
	}{
		{
			name: "a new file is removed",
			script: func(tr *tree) {
				tr.begin("m1")
				tr.write("new.txt", "a\nb\n", 0o644)
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"new.txt"}, Deletions: 2},
				tree: map[string]string{},
			},
		},
		{
			name: "an edited file gets its content and mode back",
			script: func(tr *tree) {
				tr.plain("a.txt", "one\ntwo\nthree\n")
				os.Chmod(tr.path("a.txt"), 0o600)
				tr.begin("m1")
				tr.write("a.txt", "one\n2\nthree\nfour\n", 0o644)
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"a.txt"}, Insertions: 1, Deletions: 2},
				tree: map[string]string{"a.txt": "-rw------- one\ntwo\nthree\n"},
			},
		},
		{
			name: "two messages, rewind to the first",
			script: func(tr *tree) {
				tr.plain("a.txt", "v0\n")
				tr.begin("m1")
				tr.write("a.txt", "v1\n", 0o644)
				tr.write("a.txt", "v1b\n", 0o644) // a second change under m1 saves nothing
				tr.begin("m2")
				tr.write("a.txt", "v2\n", 0o644)
				tr.write("dir/b.txt", "b\n", 0o644)
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"a.txt", "dir/b.txt"}, Insertions: 1, Deletions: 2},
				tree: map[string]string{"a.txt": "-rw-r--r-- v0\n"},
			},
		},
		{
			name: "two messages, rewind to the second",
			script: func(tr *tree) {
				tr.plain("a.txt", "v0\n")
				tr.begin("m1")
				tr.write("a.txt", "v1\n", 0o644)
				tr.write("c.txt", "c\n", 0o644)
				tr.begin("m2")
				tr.write("a.txt", "v2\n", 0o644)
			},
			id: "m2",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"a.txt"}, Insertions: 1, Deletions: 1},
				tree: map[string]string{"a.txt": "-rw-r--r-- v1\n", "c.txt": "-rw-r--r-- c\n"},
			},
		},
		{
			name: "a message with no change of its own rewinds the later ones",
			script: func(tr *tree) {
				tr.begin("m1")
				tr.begin("m2")
				tr.write("a.txt", "x\n", 0o644)
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"a.txt"}, Deletions: 1},
				tree: map[string]string{},
			},
		},
		{
			name: "dry run changes nothing",
			script: func(tr *tree) {
				tr.plain("a.txt", "v0\n")
				tr.begin("m1")
				tr.write("a.txt", "v1\nmore\n", 0o644)
				tr.write("new.txt", "n\n", 0o644)
			},
			id:  "m1",
			dry: true,
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"a.txt", "new.txt"}, Insertions: 1, Deletions: 3},
				tree: map[string]string{"a.txt": "-rw-r--r-- v1\nmore\n", "new.txt": "-rw-r--r-- n\n"},
			},
		},
		{
			name: "a file already as it was is not counted",
			script: func(tr *tree) {
				tr.plain("a.txt", "v0\n")
				tr.begin("m1")
				tr.write("a.txt", "v1\n", 0o644)
				tr.plain("a.txt", "v0\n") // the user put it back
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true},
				tree: map[string]string{"a.txt": "-rw-r--r-- v0\n"},
			},
		},
		{
			name: "unknown message",
			script: func(tr *tree) {
				tr.begin("m1")
				tr.write("a.txt", "x\n", 0o644)
			},
			id: "nope",
			want: want{
				res:  Result{Error: `no file checkpoint for user message "nope"`},
				tree: map[string]string{"a.txt": "-rw-r--r-- x\n"},
			},
		},
		{
			name: "changes before the first message are not saved",
			script: func(tr *tree) {
				tr.write("early.txt", "e\n", 0o644)
				tr.begin("m1")
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true},
				tree: map[string]string{"early.txt": "-rw-r--r-- e\n"},
			},
		},
		{
			name: "a link swapped in for the file is left alone",
			script: func(tr *tree) {
				tr.plain("a.txt", "v0\n")
				tr.begin("m1")
				tr.write("a.txt", "v1\n", 0o644)
				os.WriteFile(filepath.Join(tr.out, "secret"), []byte("keep\n"), 0o644)
				os.Remove(tr.path("a.txt"))
				os.Symlink(filepath.Join(tr.out, "secret"), tr.path("a.txt"))
			},
			id: "m1",
			want: want{
				res:     Result{CanRewind: true, SkippedLinks: []string{"a.txt"}},
				tree:    map[string]string{"a.txt": "-> out:/secret"},
				outside: map[string]string{"secret": "-rw-r--r-- keep\n"},
			},
		},
		{
			name: "a link swapped in for a created file is not removed",
			script: func(tr *tree) {
				tr.begin("m1")
				tr.write("a.txt", "v1\n", 0o644)
				os.Remove(tr.path("a.txt"))
				os.Symlink(filepath.Join(tr.out, "secret"), tr.path("a.txt"))
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, SkippedLinks: []string{"a.txt"}},
				tree: map[string]string{"a.txt": "-> out:/secret"},
			},
		},
		{
			name: "a directory replaced by a link out of the tree",
			script: func(tr *tree) {
				tr.plain("d/sub/f.txt", "v0\n")
				tr.begin("m1")
				tr.write("d/sub/f.txt", "v1\n", 0o644)
				tr.write("d/sub/g.txt", "new\n", 0o644)
				os.WriteFile(filepath.Join(tr.out, "f.txt"), []byte("theirs\n"), 0o644)
				os.WriteFile(filepath.Join(tr.out, "g.txt"), []byte("theirs too\n"), 0o644)
				os.RemoveAll(tr.path("d/sub"))
				os.Symlink(tr.out, tr.path("d/sub"))
			},
			id: "m1",
			want: want{
				res:     Result{CanRewind: true, SkippedLinks: []string{"d/sub/f.txt", "d/sub/g.txt"}},
				tree:    map[string]string{"d/sub": "-> out:"},
				outside: map[string]string{"f.txt": "-rw-r--r-- theirs\n", "g.txt": "-rw-r--r-- theirs too\n"},
			},
		},
		{
			name: "a removed directory is made again for a restored file",
			script: func(tr *tree) {
				tr.plain("d/f.txt", "v0\n")
				tr.begin("m1")
				tr.write("d/f.txt", "v1\n", 0o644)
				os.RemoveAll(tr.path("d"))
			},
			id: "m1",
			want: want{
				res:  Result{CanRewind: true, FilesChanged: []string{"d/f.txt"}, Insertions: 1},
				tree: map[string]string{"d/f.txt": "-rw-r--r-- v0\n"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			tc.script(tr)
			got, err := tr.store.Rewind(tc.id, tc.dry)
			if err != nil {
				t.Fatal(err)
			}
			rel := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					r, _ := filepath.Rel(tr.root, p)
					out = append(out, r)
				}
				return out
			}
			got.FilesChanged, got.SkippedLinks = rel(got.FilesChanged), rel(got.SkippedLinks)
			if diff := cmp.Diff(tc.want.res, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			gotTree := files(t, tr.root)
			for k, v := range gotTree {
				gotTree[k] = strings.Replace(v, "-> "+tr.out, "-> out:", 1)
			}
			if diff := cmp.Diff(tc.want.tree, gotTree, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("tree after the rewind (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.outside, files(t, tr.out), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outside the tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRewindTwice: rewinding to a message again after the files moved on
// restores them again; a dry run right after a rewind reports nothing.
func TestRewindTwice(t *testing.T) {
	tr := newTree(t)
	tr.plain("a.txt", "v0\n")
	tr.begin("m1")
	tr.write("a.txt", "v1\n", 0o644)
	if _, err := tr.store.Rewind("m1", false); err != nil {
		t.Fatal(err)
	}
	res, err := tr.store.Rewind("m1", true)
	if err != nil || len(res.FilesChanged) != 0 || !res.CanRewind {
		t.Fatalf("dry run after the rewind: %+v, %v", res, err)
	}
	tr.begin("m2")
	tr.write("a.txt", "v2\n", 0o644)
	if res, err := tr.store.Rewind("m1", false); err != nil || len(res.FilesChanged) != 1 {
		t.Fatalf("second rewind: %+v, %v", res, err)
	}
	if got := files(t, tr.root)["a.txt"]; got != "-rw-r--r-- v0\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// TestStoreReopen: a store opened again from its directory (a resumed
// session) knows the messages and snapshots saved before.
func TestStoreReopen(t *testing.T) {
	tr := newTree(t)
	tr.plain("a.txt", "v0\n")
	tr.begin("m1")
	tr.write("a.txt", "v1\n", 0o644)
	tr.begin("m2")
	tr.write("b.txt", "b\n", 0o644)
	tr.store.Close()

	again, err := Open(tr.store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if diff := cmp.Diff([]string{"m1", "m2"}, again.Messages()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if again.Current() != "m2" {
		t.Errorf("current = %q, want m2", again.Current())
	}
	res, err := again.Rewind("m1", false)
	if err != nil || len(res.FilesChanged) != 2 {
		t.Fatalf("rewind: %+v, %v", res, err)
	}
	if diff := cmp.Diff(map[string]string{"a.txt": "-rw-r--r-- v0\n"}, files(t, tr.root)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// TestBlobsDeduplicated: equal contents are stored once, and a file
// changed twice under one message is saved once.
func TestBlobsDeduplicated(t *testing.T) {
	tr := newTree(t)
	tr.plain("a.txt", "same\n")
	tr.plain("b.txt", "same\n")
	tr.begin("m1")
	tr.write("a.txt", "x\n", 0o644)
	tr.write("a.txt", "y\n", 0o644)
	tr.write("b.txt", "z\n", 0o644)
	tr.begin("m2")
	tr.write("a.txt", "same\n", 0o644) // content "y" saved
	blobs, err := os.ReadDir(filepath.Join(tr.store.Dir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 2 {
		t.Errorf("%d blobs, want 2 (same, y)", len(blobs))
	}
	idx, err := os.ReadFile(filepath.Join(tr.store.Dir(), indexName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(idx), "\n"); n != 5 { // 2 begins + 3 snapshots
		t.Errorf("index has %d lines, want 5:\n%s", n, idx)
	}
}

// TestSnapshotRefusesBadPath: only absolute clean paths are taken.
func TestSnapshotRefusesBadPath(t *testing.T) {
	tr := newTree(t)
	tr.begin("m1")
	for _, p := range []string{"rel.txt", tr.root + "/../x", ""} {
		if err := tr.store.Snapshot(p); err == nil {
			t.Errorf("Snapshot(%q) succeeded", p)
		}
	}
	if err := tr.store.Begin(""); err == nil {
		t.Error("Begin(\"\") succeeded")
	}
}

// TestDamagedBlob: a blob whose content no longer matches its name is
// not restored, and the result says so.
func TestDamagedBlob(t *testing.T) {
	tr := newTree(t)
	tr.plain("a.txt", "v0\n")
	tr.begin("m1")
	tr.write("a.txt", "v1\n", 0o644)
	blobs, _ := os.ReadDir(filepath.Join(tr.store.Dir(), "blobs"))
	for _, b := range blobs {
		os.WriteFile(filepath.Join(tr.store.Dir(), "blobs", b.Name()), []byte("tampered"), 0o600)
	}
	res, err := tr.store.Rewind("m1", false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.CanRewind || len(res.FilesChanged) != 0 || !strings.Contains(res.Error, "damaged") {
		t.Errorf("result %+v, want the damaged blob reported", res)
	}
	if got := files(t, tr.root)["a.txt"]; got != "-rw-r--r-- v1\n" {
		t.Errorf("a.txt = %q, want it untouched", got)
	}
}

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		ins, del int
	}{
		{"", "", 0, 0},
		{"", "a\nb\n", 2, 0},
		{"a\nb\n", "", 0, 2},
		{"a\nb\nc\n", "a\nc\n", 0, 1},
		{"a\nc\n", "a\nb\nc\n", 1, 0},
		{"a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"a", "a\n", 1, 1},
		{"x\ny\nz\n", "z\ny\nx\n", 2, 2},
	} {
		ins, del := lineDiff([]byte(tc.old), []byte(tc.new))
		if ins != tc.ins || del != tc.del {
			t.Errorf("lineDiff(%q, %q) = +%d -%d, want +%d -%d", tc.old, tc.new, ins, del, tc.ins, tc.del)
		}
	}
}

func FuzzLineDiff(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("b\nc\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ins, del := lineDiff(a, b)
		na, nb := len(splitLines(a)), len(splitLines(b))
		if ins < 0 || del < 0 || ins > nb || del > na || ins-del != nb-na {
			t.Fatalf("lineDiff = +%d -%d for %d → %d lines", ins, del, na, nb)
		}
	})
}

// FuzzParseIndex: whatever the index holds, loading it neither panics nor
// yields a path that is not absolute and clean, or a blob name that could
// leave the blob directory.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"m":"a"}` + "\n" + `{"m":"a","p":"/x","e":true,"mode":420,"b":"` + strings.Repeat("ab", 32) + `"}` + "\n"))
	f.Add([]byte(`{"m":"a","p":"../x"}` + "\n" + `{"m":"a","p":"/y","e":true,"b":"../../etc/passwd"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range parseIndex(data) {
			if e.Message == "" {
				t.Fatal("empty message id")
			}
			if e.Path != "" && (!filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path) {
				t.Fatalf("path %q", e.Path)
			}
			if e.Exists && (!validBlob(e.Blob) || strings.ContainsAny(e.Blob, "/.")) {
				t.Fatalf("blob %q", e.Blob)
			}
		}
		s := &Store{saved: map[string]map[string]state{}}
		for _, e := range parseIndex(data) {
			s.apply(e)
		}
	})
}

// TestOpenMissingIsEmpty: a store that was never written is empty, and
// an unreadable index is an error.
func TestOpenMissingIsEmpty(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(s.Messages()) != 0 {
		t.Fatalf("Open: %v, %v", s, err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, indexName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open over a directory index: %v", err)
	}
}
