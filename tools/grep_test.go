package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGrepInfo(t *testing.T) {
	tl := Grep()
	if info := tl.Info(); info.Name != "Grep" || !info.ReadOnly {
		t.Errorf("Info = %+v, want Grep, read-only", info)
	}
	ftCheckSchema(t, tl, "grep", "pattern", "path", "glob", "output_mode", "-B", "-A", "-C", "context",
		"-n", "-i", "-o", "type", "head_limit", "offset", "multiline")
}

// ftNGrepTree is the working directory of the n_grep recording, with the
// files modified within one millisecond as there.
func ftNGrepTree(t *testing.T) string {
	t.Helper()
	dir := ftTempDir(t)
	mt := time.Date(2026, 12, 2, 10, 49, 39, 377_000_000, time.UTC)
	for i, f := range [][2]string{
		{"notes.md", "TODO later\n"},
		{"pkg/a.go", "func Alpha() {}\n// TODO: fix\n"},
		{"pkg/b.go", "func Beta() {}\n"},
	} {
		p := ftWriteFile(t, dir, f[0], f[1])
		at := mt.Add(time.Duration(i*80) * time.Microsecond)
		_ = os.Chtimes(p, at, at)
	}
	return dir
}

// TestGrepRecorded replays n_grep exactly.
func TestGrepRecorded(t *testing.T) {
	dir := ftNGrepTree(t)
	r := ftRun(t, Grep(), ftEnv(dir), map[string]any{"pattern": "TODO"})
	if r.IsError || ftText(r) != "Found 2 files\nnotes.md\npkg/a.go" {
		t.Errorf("files mode = %q", ftText(r))
	}
	if got, want := ftStructuredJSON(t, r), `{"mode":"files_with_matches","filenames":["notes.md","pkg/a.go"],"numFiles":2,"totalFiles":2}`; got != want {
		t.Errorf("tool_use_result:\n got %s\nwant %s", got, want)
	}
	r = ftRun(t, Grep(), ftEnv(dir), map[string]any{"pattern": `func \w+`, "output_mode": "content", "-n": true, "glob": "*.go"})
	if r.IsError || ftText(r) != "pkg/a.go:1:func Alpha() {}\npkg/b.go:1:func Beta() {}" {
		t.Errorf("content mode = %q", ftText(r))
	}
	want := `{"mode":"content","numFiles":0,"filenames":[],"content":"pkg/a.go:1:func Alpha() {}\npkg/b.go:1:func Beta() {}","numLines":2,"totalLines":2}`
	if got := ftStructuredJSON(t, r); got != want {
		t.Errorf("tool_use_result:\n got %s\nwant %s", got, want)
	}
}

// ftGrepTree is a tree with ignore files, hidden and binary files.
func ftGrepTree(t *testing.T) string {
	t.Helper()
	dir := ftTempDir(t)
	files := [][2]string{
		{"main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"Hello\")\n\t// TODO: greet better\n}\n"},
		{"lib/util.go", "package lib\n\n// Helper does little.\nfunc Helper() int {\n\treturn 42\n}\n\nfunc helper2() {}\n"},
		{"lib/util_test.go", "package lib\n\nfunc TestHelper() {}\n"},
		{"web/app.ts", "export function hello(): string {\n  return \"hello\";\n}\n"},
		{"web/app.js", "function hello() { return 'HELLO' }\n"},
		{"docs/readme.md", "# Title\nhello world\nsecond line\nthird line\nfourth line\nhello again\n"},
		{"build/out.go", "package build // generated hello\n"},
		{"notes.log", "hello from an ignored log\n"},
		{".hidden/secret.go", "package hidden // hello\n"},
		{".config.go", "package config // hello\n"},
		{"data.bin", "hello\x00binary"},
		{"crlf.txt", "hello crlf\r\nbye\r\n"},
		{"sub/.gitignore", "skip.txt\n"},
		{"sub/skip.txt", "hello skipped\n"},
		{"sub/keep.txt", "hello kept\n"},
		{".ignore", "*.log\n"},
		{".gitignore", "build/\n!build/keep.go\n"},
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := ftWriteFile(t, dir, f[0], f[1])
		at := base.Add(time.Duration(i) * time.Minute)
		_ = os.Chtimes(p, at, at)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ftWriteFile(t, dir, ".git/HEAD", "hello ref\n")
	if err := os.Symlink(filepath.Join(dir, "main.go"), filepath.Join(dir, "linked.go")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGrepGolden(t *testing.T) {
	dir := ftGrepTree(t)
	cases := []struct {
		name  string
		input map[string]any
	}{
		{"files_default", map[string]any{"pattern": "hello"}},
		{"files_ignore_case", map[string]any{"pattern": "hello", "-i": true}},
		{"content", map[string]any{"pattern": "hello", "output_mode": "content", "-i": true}},
		{"content_no_numbers", map[string]any{"pattern": "Helper", "output_mode": "content", "-n": false}},
		{"content_context", map[string]any{"pattern": "hello", "output_mode": "content", "-C": 1, "path": "docs"}},
		{"content_before_after", map[string]any{"pattern": "func", "output_mode": "content", "-B": 1, "-A": 0, "type": "go"}},
		{"content_context_alias", map[string]any{"pattern": "return", "output_mode": "content", "context": 1}},
		{"only_matching", map[string]any{"pattern": `[Hh]elper\w*`, "output_mode": "content", "-o": true}},
		{"count", map[string]any{"pattern": "hello", "output_mode": "count", "-i": true}},
		{"count_single_file", map[string]any{"pattern": "line", "output_mode": "count", "path": "docs/readme.md"}},
		{"single_file_content", map[string]any{"pattern": "line", "output_mode": "content", "path": "docs/readme.md"}},
		{"single_hidden_file", map[string]any{"pattern": "hello", "path": ".config.go"}},
		{"glob_braces", map[string]any{"pattern": "hello", "glob": "*.{ts,js}", "-i": true}},
		{"glob_list", map[string]any{"pattern": "hello", "glob": "*.md, *.txt"}},
		{"glob_exclude", map[string]any{"pattern": "hello", "glob": "!docs", "-i": true}},
		{"glob_anchored", map[string]any{"pattern": "package", "glob": "lib/*.go"}},
		{"type_ts", map[string]any{"pattern": "hello", "type": "ts"}},
		{"multiline", map[string]any{"pattern": `func Helper\(\) int \{.*?return`, "multiline": true, "output_mode": "content"}},
		{"multiline_files", map[string]any{"pattern": `second line\nthird`, "multiline": true}},
		{"anchors", map[string]any{"pattern": `^\s*return`, "output_mode": "content"}},
		{"crlf_line_end", map[string]any{"pattern": `crlf$`, "output_mode": "content", "path": "crlf.txt"}},
		{"head_limit", map[string]any{"pattern": "line", "output_mode": "content", "head_limit": 2}},
		{"offset", map[string]any{"pattern": "line", "output_mode": "content", "head_limit": 2, "offset": 2}},
		{"offset_past_end", map[string]any{"pattern": "hello", "offset": 50}},
		{"files_head_limit", map[string]any{"pattern": "package", "head_limit": 1}},
		{"unlimited", map[string]any{"pattern": ".", "output_mode": "count", "head_limit": 0}},
		{"no_files", map[string]any{"pattern": "zebra"}},
		{"no_matches_content", map[string]any{"pattern": "zebra", "output_mode": "content"}},
		{"no_matches_count", map[string]any{"pattern": "zebra", "output_mode": "count"}},
		{"invalid_regex", map[string]any{"pattern": "(unclosed"}},
		{"newline_without_multiline", map[string]any{"pattern": `a\nb`}},
		{"unknown_type", map[string]any{"pattern": "x", "type": "klingon"}},
		{"missing_path", map[string]any{"pattern": "x", "path": "nowhere"}},
		{"bad_mode", map[string]any{"pattern": "x", "output_mode": "lines"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, Grep(), ftEnv(dir), tc.input)
			ftCheckGolden(t, "grep", tc.name, r, dir)
		})
	}
}

// TestGrepIgnoreOutsideRepo checks that .gitignore counts only inside a git
// repository, while .ignore counts everywhere.
func TestGrepIgnoreOutsideRepo(t *testing.T) {
	dir := ftTempDir(t)
	ftWriteFile(t, dir, ".gitignore", "a.txt\n")
	ftWriteFile(t, dir, ".ignore", "b.txt\n")
	ftWriteFile(t, dir, "a.txt", "needle\n")
	ftWriteFile(t, dir, "b.txt", "needle\n")
	r := ftRun(t, Grep(), ftEnv(dir), map[string]any{"pattern": "needle"})
	if got := ftText(r); got != "Found 1 file\na.txt" {
		t.Errorf("outside a repository = %q", got)
	}
}

// TestGrepParentIgnore checks that the ignore files of the directories
// between the repository root and the searched directory apply.
func TestGrepParentIgnore(t *testing.T) {
	dir := ftTempDir(t)
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ftWriteFile(t, dir, ".gitignore", "*.gen.go\n/src/only-root.txt\n")
	ftWriteFile(t, dir, "src/x.gen.go", "needle\n")
	ftWriteFile(t, dir, "src/x.go", "needle\n")
	ftWriteFile(t, dir, "src/only-root.txt", "needle\n")
	ftWriteFile(t, dir, "src/deeper/.gitignore", "!keep.gen.go\n")
	ftWriteFile(t, dir, "src/deeper/keep.gen.go", "needle\n")
	r := ftRun(t, Grep(), ftEnv(dir), map[string]any{"pattern": "needle", "path": "src", "output_mode": "count"})
	want := "src/deeper/keep.gen.go:1\nsrc/x.go:1\n\nTotal: 2 matching lines in 2 files."
	if got := ftText(r); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGrepContentKeepsFirstFiles(t *testing.T) {
	dir := ftTempDir(t)
	for i := range 40 {
		ftWriteFile(t, dir, fmt.Sprintf("f%02d.txt", i), strings.Repeat("match\n", 10))
	}
	r := ftRun(t, Grep(), ftEnv(dir), map[string]any{"pattern": "match", "output_mode": "content", "head_limit": 15, "offset": 5})
	lines := strings.Split(ftText(r), "\n")
	if len(lines) != 17 || lines[0] != "f00.txt:6:match" || lines[14] != "f01.txt:10:match" {
		t.Errorf("page = %q", lines)
	}
	if want := "[Showing lines 6-20 of 400. Use offset 20 to see more.]"; lines[16] != want {
		t.Errorf("note = %q", lines[16])
	}
	res := r.Structured.(GrepContentResult)
	if res.NumLines != 15 || res.TotalLines != 400 || *res.AppliedLimit != 15 || *res.AppliedOffset != 5 {
		t.Errorf("tool_use_result = %+v", res)
	}
}

func TestGrepCompile(t *testing.T) {
	for _, tc := range []struct {
		pattern    string
		ignoreCase bool
		multiline  bool
		text       string
		want       []string
	}{
		{`a.c`, false, false, "abc\na\nc", []string{"abc"}},
		{`a.c`, false, true, "abc\na\nc", []string{"abc", "a\nc"}},
		{`a[^x]c`, false, false, "a\nc", nil},
		{`a\sc`, false, false, "a\nc a c", []string{"a c"}},
		{`^b$`, false, false, "a\nb\nc", []string{"b"}},
		{`HELLO`, true, false, "hello", []string{"hello"}},
		{`(?i)x`, false, false, "X", []string{"X"}},
		{`[\na]`, false, false, "a\nb", []string{"a"}},
		{`a|\n`, false, true, "a\n", []string{"a", "\n"}},
	} {
		re, err := compileGrep(tc.pattern, tc.ignoreCase, tc.multiline)
		if err != nil {
			t.Errorf("compileGrep(%q): %v", tc.pattern, err)
			continue
		}
		if diff := cmp.Diff(tc.want, re.FindAllString(tc.text, -1)); diff != "" {
			t.Errorf("compileGrep(%q, %v, %v) on %q (-want +got):\n%s", tc.pattern, tc.ignoreCase, tc.multiline, tc.text, diff)
		}
	}
	if _, err := compileGrep(`a\nb`, false, false); err != errNewlineInPattern {
		t.Errorf("literal newline without multiline: %v", err)
	}
}

func TestGrepRequiredLiteral(t *testing.T) {
	for _, tc := range []struct {
		pattern    string
		ignoreCase bool
		lit        string
		fold       bool
	}{
		{`func \(\w+ \*Reader\) Read\(`, false, " *Reader) Read(", false},
		{`TODO`, false, "TODO", false},
		{`deprecated`, true, "deprecated", true},
		{`Mask`, true, "ma", true},
		{`a|b`, false, "", false},
		{`(foo)+bar?`, false, "foo", false},
		{`x*`, false, "", false},
		{`\Aimport`, false, "", false},
		{`é+`, true, "", false},
	} {
		m, err := newGrepMatcher(tc.pattern, tc.ignoreCase, false)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.lit) != tc.lit || m.fold != tc.fold {
			t.Errorf("literal of %q = %q (fold %v), want %q (fold %v)", tc.pattern, m.lit, m.fold, tc.lit, tc.fold)
		}
	}
	// Folding finds what Unicode folding finds.
	m, _ := newGrepMatcher("mask", true, false)
	if got := m.matches([]byte("no\nMAſK here\n"), false); len(got) != 1 {
		t.Errorf("(?i)mask on MAſK: %v", got)
	}
}

func TestGrepSplitGlobs(t *testing.T) {
	for in, want := range map[string][]string{
		"*.go":              {"*.go"},
		"*.go,*.md":         {"*.go", "*.md"},
		"*.go *.md":         {"*.go", "*.md"},
		"*.{ts,tsx},!x":     {"*.{ts,tsx}", "!x"},
		" , ":               nil,
		"src/**/*.{a,b} !c": {"src/**/*.{a,b}", "!c"},
	} {
		if diff := cmp.Diff(want, splitGlobs(in)); diff != "" {
			t.Errorf("splitGlobs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestGrepParseIgnore(t *testing.T) {
	rules := parseIgnore("# comment\n\n*.log\n!keep.log\n/root-only\nbuild/\ndocs/*.md  \n\\#hash\n{x}\n")
	want := []ignoreRule{
		{pattern: "**/*.log"},
		{pattern: "**/keep.log", negate: true},
		{pattern: "root-only"},
		{pattern: "**/build", dirOnly: true},
		{pattern: "docs/*.md"},
		{pattern: "**/#hash"},
		{pattern: `**/\{x\}`},
	}
	if diff := cmp.Diff(want, rules, cmp.AllowUnexported(ignoreRule{})); diff != "" {
		t.Errorf("parseIgnore (-want +got):\n%s", diff)
	}
	n := &ignoreNode{dir: "/r", rules: rules}
	for path, want := range map[string]bool{
		"/r/a.log": true, "/r/x/keep.log": false, "/r/root-only": true, "/r/x/root-only": false,
		"/r/docs/a.md": true, "/r/x/docs/a.md": false, "/r/#hash": true, "/r/{x}": true, "/r/y": false,
	} {
		if got := n.ignored(path, false); got != want {
			t.Errorf("ignored(%s) = %v, want %v", path, got, want)
		}
	}
	if !n.ignored("/r/a/build", true) || n.ignored("/r/a/build", false) {
		t.Error("build/ should match directories only")
	}
}

func BenchmarkGrepGOROOT(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no GOROOT/src")
	}
	env := ftEnv(root)
	for _, bc := range []struct {
		name  string
		input map[string]any
	}{
		{"files", map[string]any{"pattern": `func \(\w+ \*Reader\) Read\(`}},
		{"content", map[string]any{"pattern": `TODO\(\w+\)`, "output_mode": "content", "type": "go"}},
		{"count_ignore_case", map[string]any{"pattern": "deprecated", "output_mode": "count", "-i": true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r := ftRun(b, Grep(), env, bc.input)
				if r.IsError {
					b.Fatal(ftText(r))
				}
			}
		})
	}
}
