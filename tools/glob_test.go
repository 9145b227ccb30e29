package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGlobInfo(t *testing.T) {
	tl := Glob()
	if info := tl.Info(); info.Name != "Glob" || !info.ReadOnly {
		t.Errorf("Info = %+v, want Glob, read-only", info)
	}
	ftCheckSchema(t, tl, "glob", "pattern", "path")
}

// ftGlobTree lays out a small tree whose files have distinct modification
// times: the later a file is listed, the newer it is.
func ftGlobTree(t *testing.T) string {
	t.Helper()
	dir := ftTempDir(t)
	files := []string{
		"README.md", "main.go", "pkg/a.go", "pkg/b.go", "pkg/sub/c.go", "pkg/sub/notes.txt",
		".hidden/h.go", ".env", ".git/config.go", "vendor/v.go", "docs/guide.md",
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, f := range files {
		p := ftWriteFile(t, dir, f, "// "+f+"\n")
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ftWriteFile(t, dir, ".gitignore", "vendor/\n")
	old := base.Add(-time.Hour)
	_ = os.Chtimes(filepath.Join(dir, ".gitignore"), old, old)
	if err := os.Symlink(filepath.Join(dir, "main.go"), filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGlobGolden(t *testing.T) {
	dir := ftGlobTree(t)
	outside := ftTempDir(t)
	ftWriteFile(t, outside, "far/x.go", "x")
	cases := []struct {
		name  string
		input map[string]any
	}{
		{"recursive", map[string]any{"pattern": "**/*.go"}},
		{"top_level", map[string]any{"pattern": "*.go"}},
		{"segment", map[string]any{"pattern": "pkg/*.go"}},
		{"braces", map[string]any{"pattern": "**/*.{md,txt}"}},
		{"relative_path", map[string]any{"pattern": "*.go", "path": "pkg/sub"}},
		{"absolute_path", map[string]any{"pattern": "**/*.go", "path": filepath.Join(dir, "pkg")}},
		{"absolute_pattern", map[string]any{"pattern": filepath.Join(dir, "pkg", "**", "*.txt")}},
		{"dot_prefix", map[string]any{"pattern": "./pkg/../*.md"}},
		{"hidden", map[string]any{"pattern": ".*"}},
		{"literal", map[string]any{"pattern": "pkg/a.go"}},
		{"none", map[string]any{"pattern": "**/*.rs"}},
		{"missing_path", map[string]any{"pattern": "*", "path": filepath.Join(dir, "nope")}},
		{"path_is_file", map[string]any{"pattern": "*", "path": filepath.Join(dir, "main.go")}},
		{"null_path", map[string]any{"pattern": "*.md", "path": "null"}},
		{"bad_pattern", map[string]any{"pattern": "[a-"}},
		{"empty_pattern", map[string]any{"pattern": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, Glob(), ftEnv(dir), tc.input)
			ftCheckGolden(t, "glob", tc.name, r, dir)
		})
	}
	// The directory outside cwd is a second temporary directory, which
	// the golden file does not mask: check it here.
	r := ftRun(t, Glob(), ftEnv(dir), map[string]any{"pattern": "**/*.go", "path": outside})
	if want := filepath.Join(outside, "far", "x.go"); ftText(r) != want {
		t.Errorf("outside cwd = %q, want %q", ftText(r), want)
	}
}

func TestGlobTruncates(t *testing.T) {
	dir := ftTempDir(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 130 {
		p := ftWriteFile(t, dir, fmt.Sprintf("f%03d.txt", i), "x")
		mt := base.Add(time.Duration(i) * time.Second)
		_ = os.Chtimes(p, mt, mt)
	}
	r := ftRun(t, Glob(), ftEnv(dir), map[string]any{"pattern": "*.txt"})
	lines := strings.Split(ftText(r), "\n")
	if len(lines) != 101 || lines[0] != "f129.txt" || lines[99] != "f030.txt" {
		t.Errorf("got %d lines, first %q, 100th %q", len(lines), lines[0], lines[min(99, len(lines)-1)])
	}
	if want := "(Showing the 100 most recently modified of 130 matches. Use a more specific pattern or path to see the others.)"; lines[100] != want {
		t.Errorf("note = %q", lines[100])
	}
	res := r.Structured.(GlobResult)
	if !res.Truncated || res.NumFiles != 100 || res.TotalMatches != 130 || len(res.Filenames) != 100 || !res.CountIsComplete {
		t.Errorf("tool_use_result = %+v", res)
	}
}

// TestGlobSameMillisecond checks the tie-break of files modified within
// one millisecond: by path, as the reference orders them.
func TestGlobSameMillisecond(t *testing.T) {
	dir := ftTempDir(t)
	mt := time.Date(2026, 12, 2, 10, 49, 39, 377_000_000, time.UTC)
	for i, f := range []string{"z.md", "a.md", "m/b.md"} {
		p := ftWriteFile(t, dir, f, "x")
		at := mt.Add(time.Duration(i) * time.Microsecond)
		_ = os.Chtimes(p, at, at)
	}
	r := ftRun(t, Glob(), ftEnv(dir), map[string]any{"pattern": "**/*.md"})
	if diff := cmp.Diff("a.md\nm/b.md\nz.md", ftText(r)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestGlobDescend(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		want         bool
	}{
		{"*.go", "pkg", false},
		{"pkg/*.go", "pkg", true},
		{"pkg/*.go", "lib", false},
		{"pkg/*.go", "pkg/sub", false},
		{"**/*.go", "a/b/c", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b", false},
		{"*/x/*.go", "q/x", true},
		{"*/x/*.go", "q/y", false},
	} {
		d := globDescend(tc.pattern)
		depth := strings.Count(tc.dir, "/") + 1
		if got := d == nil || d(tc.dir, depth); got != tc.want {
			t.Errorf("descend(%q, %q) = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}

func TestGlobCancelled(t *testing.T) {
	dir := ftGlobTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := walkTree(ctx, dir, walkConfig{hidden: true, file: func(string, string, os.DirEntry) {}})
	if err != context.Canceled {
		t.Errorf("walkTree on a cancelled context = %v", err)
	}
}

func BenchmarkGlobGOROOT(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no GOROOT/src")
	}
	env := ftEnv(root)
	b.ResetTimer()
	for b.Loop() {
		r := ftRun(b, Glob(), env, map[string]any{"pattern": "**/*_test.go"})
		if r.IsError {
			b.Fatal(ftText(r))
		}
	}
}

// TestGlobWalkVisitsAll checks that the parallel walk reports every file
// exactly once, whatever the shape of the tree.
func TestGlobWalkVisitsAll(t *testing.T) {
	dir := ftTempDir(t)
	want := map[string]int{}
	for i := range 150 {
		rel := fmt.Sprintf("flat%03d.txt", i)
		if i%3 == 0 {
			rel = fmt.Sprintf("d%d/e%d/f%03d.txt", i%5, i%7, i)
		}
		ftWriteFile(t, dir, rel, "x")
		want[rel] = 1
	}
	var mu sync.Mutex
	got := map[string]int{}
	for _, workers := range []int{1, 2, 7} {
		clear(got)
		err := walkTree(context.Background(), dir, walkConfig{workers: workers, file: func(abs, rel string, d os.DirEntry) {
			if abs != filepath.Join(dir, filepath.FromSlash(rel)) || d.Name() != filepath.Base(abs) {
				t.Errorf("inconsistent entry %s / %s / %s", abs, rel, d.Name())
			}
			mu.Lock()
			got[rel]++
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d workers (-want +got):\n%s", workers, diff)
		}
	}
}
