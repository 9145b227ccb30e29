package permission

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree makes root/{work/sub, out} with links work/out -> ../out,
// work/dangling -> out/new, work/loop -> loop, and returns root.
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work/sub", "out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := [][2]string{{"work/out", "../out"}, {"work/dangling", filepath.Join(root, "out/new")}, {"work/loop", "loop"}}
	for _, l := range links {
		if err := os.Symlink(l[1], filepath.Join(root, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	home, _ := os.UserHomeDir()
	tests := []struct{ cwd, in, want string }{
		{work, "a.txt", work + "/a.txt"},
		{work, "./sub/../a.txt", work + "/a.txt"},
		{work, "sub//x/", work + "/sub/x"},
		{work, "../out/x", root + "/out/x"},
		{work, "out/x", root + "/out/x"},
		{work, "out/../work/x", root + "/work/x"}, // ".." after the link, as the kernel takes it
		{work, "dangling", root + "/out/new"},
		{work, "/" + work[1:] + "/out", root + "/out"},
		{"/", work + "/sub/missing/../x", work + "/sub/x"},
		{work, "~", home},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.cwd, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tt.cwd, tt.in, got, err, tt.want)
		}
	}
	if got, err := Resolve(work, "loop/x"); err != nil || got == "" {
		t.Errorf("a link loop must resolve to something: %q, %v", got, err)
	}
	if _, err := Resolve("relative", "x"); err == nil {
		t.Error("a relative path without an absolute cwd must fail")
	}
	if _, err := Resolve(work, ""); err == nil {
		t.Error("an empty path must fail")
	}
}

func TestCandidates(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	// The file tools clean the path before opening it, the kernel does
	// not: both readings are candidates.
	got := candidates(work + "/out/../sub/x")
	want := map[string]bool{work + "/sub/x": true, root + "/sub/x": true}
	for _, c := range got {
		delete(want, c)
	}
	if len(want) != 0 {
		t.Errorf("candidates = %q, missing %v", got, want)
	}
}

func TestPathPatterns(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	bases := pathBases{cwd: work, source: filepath.Join(root, "proj"), home: "/home/u"}
	tests := []struct {
		spec    string
		b       Behavior
		yes, no []string
	}{
		{"src/**", Allow, []string{work + "/src/a.go", work + "/src/x/y.go", work + "/src"}, []string{work + "/x/src/a.go", work + "/src2/a", root + "/src/a"}},
		{"src/**", Deny, []string{work + "/src/a.go", work + "/x/src/a.go", "/elsewhere/src/a"}, []string{work + "/src2/a"}},
		{".env", Allow, []string{work + "/.env", work + "/a/b/.env"}, []string{root + "/.env", work + "/.envx"}},
		{".env", Deny, []string{"/anywhere/.env", work + "/.env"}, []string{work + "/x.env"}},
		{"*.key", Deny, []string{"/a/b/c.key"}, []string{"/a/b/c.keys"}},
		{"//etc/**", Allow, []string{"/etc/passwd", "/etc/a/b"}, []string{"/etcx/a", "/tmp/etc/a"}},
		{"~/notes.txt", Allow, []string{"/home/u/notes.txt"}, []string{"/home/v/notes.txt", work + "/notes.txt"}},
		{"/docs/*.md", Allow, []string{root + "/proj/docs/a.md"}, []string{work + "/docs/a.md", root + "/proj/docs/x/a.md"}},
		{"./build", Deny, []string{work + "/build", work + "/build/x"}, []string{work + "/a/build"}},
		{"secrets/", Deny, []string{"/x/secrets/k"}, []string{"/x/secretsk"}},
		{"out/**", Allow, []string{work + "/out/a", root + "/out/a"}, nil}, // the link and its target
	}
	for _, tt := range tests {
		p, err := compilePathPattern(tt.spec, tt.b, bases, false)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		for _, y := range tt.yes {
			if !p.match(y) {
				t.Errorf("%s rule %q should match %s (globs %q)", tt.b, tt.spec, y, p.globs)
			}
		}
		for _, n := range tt.no {
			if p.match(n) {
				t.Errorf("%s rule %q should not match %s (globs %q)", tt.b, tt.spec, n, p.globs)
			}
		}
	}
}

func TestCaseSensitivity(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux file systems are case-sensitive; others fold case")
	}
	st := &state{dirs: []string{"/work"}, dirForms: []string{"/work"}}
	if st.insideAll([]string{"/Work/x"}) || st.insideAll([]string{"/WORK"}) {
		t.Error("/Work is not /work on Linux")
	}
	if !st.insideAll([]string{"/work/X"}) {
		t.Error("/work/X is inside /work")
	}
	if st.insideAll([]string{"/workx/a"}) || st.insideAll([]string{"/wor"}) {
		t.Error("a sibling with a common prefix is not inside")
	}
}

func TestProtectedAndCritical(t *testing.T) {
	for _, p := range []string{"/w/.git", "/w/.git/config", "/w/a/.git/hooks/x", "/w/.bashrc", "/w/.claude/settings.json", "/w/.vscode/x", "/w/.mcp.json"} {
		if !isProtected(p, false) {
			t.Errorf("%s should be protected", p)
		}
	}
	for _, p := range []string{"/w/.gitignore", "/w/git/config", "/w/.claude/worktrees/x/a.go", "/w/bashrc"} {
		if isProtected(p, false) {
			t.Errorf("%s should not be protected", p)
		}
	}
	st := &state{home: "/home/u", dirForms: []string{"/home/u/proj"}}
	for _, p := range []string{"/", "/usr", "/home", "/home/u", "/home/u/proj"} {
		if !st.critical(p) {
			t.Errorf("%s should be critical", p)
		}
	}
	for _, p := range []string{"/usr/lib", "/home/u/proj/build", "/home/v"} {
		if st.critical(p) {
			t.Errorf("%s should not be critical", p)
		}
	}
}

// A file tool's check resolves a clean absolute path once; a path with
// ".." is resolved as written too, since the kernel may reach another file
// through it than its cleaned form.
func TestJudgePathWalksOnce(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	c, err := New(Config{Mode: ModeBypass, Dirs: []string{work}, AllowBypass: true})
	if err != nil {
		t.Fatal(err)
	}
	c.state() // the first use resolves the working directories: not counted
	seen := recordResolutions(t, root)
	for _, tt := range []struct {
		path string
		want map[string]int
	}{
		{work + "/sub/x", map[string]int{work + "/sub/x": 1}},
		{work + "/out/../sub/x", map[string]int{work + "/sub/x": 1, work + "/out/../sub/x": 1}},
	} {
		seen.reset()
		in, _ := json.Marshal(map[string]string{"file_path": tt.path})
		c.Decide(context.Background(), Call{Tool: "Read", Input: in})
		if d := cmp.Diff(tt.want, seen.get()); d != "" {
			t.Errorf("%s: paths resolved (-want +got):\n%s", tt.path, d)
		}
	}
}

// New checks the rules without the file system; the first use resolves
// each path rule's base once, and a rule matches through a link in its
// base as before.
func TestNewResolvesNothing(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	linked := filepath.Join(root, "linked")
	if err := os.Symlink(work, linked); err != nil {
		t.Fatal(err)
	}
	seen := recordResolutions(t, root)
	rules := RuleSet{Sources: []SourceRules{{Source: SourceSession, Deny: []string{"Read(/" + linked + "/secret/**)"}}}}
	c, err := New(Config{Mode: ModeDefault, Dirs: []string{work}, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	if got := seen.get(); len(got) != 0 {
		t.Errorf("New resolved %v, want nothing", got)
	}
	c.state()
	// The working directory, and the literal start of the rule's pattern
	// (its base is "/").
	want := map[string]int{work: 1, linked + "/secret": 1}
	if d := cmp.Diff(want, seen.get()); d != "" {
		t.Errorf("first use resolved (-want +got):\n%s", d)
	}
	in, _ := json.Marshal(map[string]string{"file_path": work + "/secret/key"})
	if d := c.Decide(context.Background(), Call{Tool: "Read", Input: in}); d.Behavior != Deny {
		t.Errorf("Read of %s/secret/key through the rule's linked base: %s, want deny", work, d.Behavior)
	}
}

// resolutions counts the paths under a root that resolvePhysical is asked
// to resolve, from any goroutine.
type resolutions struct {
	mu   sync.Mutex
	seen map[string]int
}

// recordResolutions counts the resolutions of paths under root until the
// test ends.
func recordResolutions(t *testing.T, root string) *resolutions {
	r := &resolutions{seen: map[string]int{}}
	hook := func(p string) {
		if strings.HasPrefix(p, root) {
			r.mu.Lock()
			r.seen[p]++
			r.mu.Unlock()
		}
	}
	resolveHook.Store(&hook)
	t.Cleanup(func() { resolveHook.Store(nil) })
	return r
}

func (r *resolutions) reset() {
	r.mu.Lock()
	clear(r.seen)
	r.mu.Unlock()
}

// get returns a copy of the counts so far.
func (r *resolutions) get() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.seen)
}

// The check New makes and the first use share the compiled rules that do
// not name paths: each is compiled and kept once.
func TestRuleCheckSharesCache(t *testing.T) {
	text := "Bash(rule-check-shares-cache *)"
	rules := RuleSet{Sources: []SourceRules{{Source: SourceSession, Allow: []string{text}}}}
	c, err := New(Config{Mode: ModeDefault, Dirs: []string{t.TempDir()}, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	c.state()
	ruleCache.RLock()
	n := 0
	for k := range ruleCache.m {
		if k.text == text {
			n++
		}
	}
	ruleCache.RUnlock()
	if n != 1 {
		t.Errorf("%q is kept %d times, want once", text, n)
	}
}
