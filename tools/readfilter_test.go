package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/tool"
)

// denyTree is a tree with files that Read deny rules cover, in every rule
// form, next to files that no rule covers:
//
//	root/work/secrets/key.txt     Read(./secrets/**)
//	root/work/a/b/.env            Read(**/.env)
//	root/abs/hidden.txt           Read(//root/abs/**)
//	root/home/x/file.txt          Read(~/x)
//	root/work/pub/ok.txt, root/work/a/b/fine.txt, root/abs2/fine.txt   not covered
//	root/work/link -> secrets, root/work/pub/up -> ../secrets, root/worklink -> work
type denyTree struct {
	root, cwd, home string
	env             *tool.Env
}

const (
	secretMarker = "SECRET_MARKER"
	publicMarker = "PUBLIC_MARKER"
)

func newDenyTree(t *testing.T) *denyTree {
	t.Helper()
	root := ftTempDir(t)
	d := &denyTree{root: root, cwd: filepath.Join(root, "work"), home: filepath.Join(root, "home")}
	ftWriteFile(t, d.cwd, "secrets/key.txt", secretMarker+" key\n")
	ftWriteFile(t, d.cwd, "a/b/.env", secretMarker+" env\n")
	ftWriteFile(t, d.cwd, "a/b/fine.txt", publicMarker+" b\n")
	ftWriteFile(t, d.cwd, "pub/ok.txt", publicMarker+" ok\n")
	ftWriteFile(t, d.cwd, "sub/ok.txt", publicMarker+" sub\n")
	ftWriteFile(t, root, "abs/hidden.txt", secretMarker+" abs\n")
	ftWriteFile(t, root, "abs2/fine.txt", publicMarker+" abs2\n")
	ftWriteFile(t, d.home, "x/file.txt", secretMarker+" home\n")
	if err := os.Symlink("secrets", filepath.Join(d.cwd, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secrets", filepath.Join(d.cwd, "pub", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("work", filepath.Join(root, "worklink")); err != nil {
		t.Fatal(err)
	}
	var rs permission.RuleSet
	for _, r := range []string{"Read(./secrets/**)", "Read(**/.env)", "Read(/" + root + "/abs/**)", "Read(~/x)"} {
		v, err := permission.ParseRule(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Add(permission.SourceCLI, permission.Deny, v); err != nil {
			t.Fatal(err)
		}
	}
	ck, err := permission.New(permission.Config{Rules: rs, Dirs: []string{d.cwd}, Home: d.home})
	if err != nil {
		t.Fatal(err)
	}
	d.env = &tool.Env{Cwd: d.cwd, Home: d.home, State: &tool.State{}, ReadDenied: ck.ReadDeniedAs}
	return d
}

// resultText is everything a result shows: its text and its structured
// output.
func resultText(t *testing.T, r tool.Result) string {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	return r.Text() + "\n" + string(b)
}

// secretNames are the names of the covered files, which Glob and the
// files modes of Grep would show.
var secretNames = []string{"key.txt", ".env", "hidden.txt", "x/file.txt"}

func checkNoSecret(t *testing.T, text string, wantPublic bool) {
	t.Helper()
	if strings.Contains(text, secretMarker) {
		t.Errorf("a denied file's content is in the result:\n%s", text)
	}
	for _, n := range secretNames {
		if strings.Contains(text, n) {
			t.Errorf("the denied file %s is named in the result:\n%s", n, text)
		}
	}
	if wantPublic && !strings.Contains(text, publicMarker) && !strings.Contains(text, "ok.txt") && !strings.Contains(text, "fine.txt") {
		t.Errorf("no file that no rule covers was found, so the test proves nothing:\n%s", text)
	}
}

// TestGrepGlobDropDenied: whatever their path names (an ancestor of the
// denied directory, sub/.., a link to it, an absolute path) and whatever
// their glob or type, Grep in all three output modes and Glob leave out
// the files that Read deny rules cover.
func TestGrepGlobDropDenied(t *testing.T) {
	d := newDenyTree(t)
	paths := []struct {
		name, path string
		public     bool // a file no rule covers lies below
	}{
		{"default", "", true},
		{"ancestor", d.root, true},
		{"sub-dotdot", "sub/..", true},
		{"absolute", d.cwd, true},
		{"link to denied dir", "link", false},
		{"abs link to denied dir", filepath.Join(d.cwd, "link"), false},
		{"dir holding a link", "pub", true},
		{"denied dir itself", "secrets", false},
		{"inside denied dir", filepath.Join(d.cwd, "secrets", "."), false},
		{"home", d.home, false},
		{"abs denied ancestor", filepath.Join(d.root, "abs"), false},
		{"a/b", "a/b", true},
		{"link to the working dir", filepath.Join(d.root, "worklink"), true},
		{"through a link to the working dir", "../worklink", true},
	}
	for _, p := range paths {
		for _, mode := range []string{"content", "files_with_matches", "count"} {
			for _, opt := range []map[string]any{nil, {"glob": "*.txt"}, {"glob": "**/secrets/**"}, {"glob": "../../**"}, {"type": "txt"}} {
				in := map[string]any{"pattern": "MARKER", "output_mode": mode}
				if p.path != "" {
					in["path"] = p.path
				}
				for k, v := range opt {
					in[k] = v
				}
				t.Run("Grep/"+p.name+"/"+mode, func(t *testing.T) {
					r := ftRun(t, Grep(), d.env, in)
					checkNoSecret(t, resultText(t, r), p.public && opt == nil)
				})
			}
		}
		t.Run("Glob/"+p.name, func(t *testing.T) {
			in := map[string]any{"pattern": "**/*"}
			if p.path != "" {
				in["path"] = p.path
			}
			r := ftRun(t, Glob(), d.env, in)
			checkNoSecret(t, resultText(t, r), p.public)
		})
	}
	// Glob patterns that leave the search path, or name the denied files.
	for _, pat := range []string{"**/.env", "**/key.txt", "secrets/*", "link/*", "../**/*.txt", d.root + "/**/*.txt",
		"sub/../secrets/*", "../home/x/*", "pub/up/*"} {
		t.Run("Glob pattern "+pat, func(t *testing.T) {
			r := ftRun(t, Glob(), d.env, map[string]any{"pattern": pat})
			checkNoSecret(t, resultText(t, r), false)
		})
	}
}

// TestReadRefusesDenied: Read refuses a denied file however it is named.
func TestReadRefusesDenied(t *testing.T) {
	d := newDenyTree(t)
	for _, p := range []string{
		filepath.Join(d.cwd, "secrets/key.txt"),
		filepath.Join(d.cwd, "link/key.txt"),
		filepath.Join(d.cwd, "sub/../secrets/key.txt"),
		filepath.Join(d.cwd, "pub/up/key.txt"),
		filepath.Join(d.cwd, "a/b/.env"),
		filepath.Join(d.root, "abs/hidden.txt"),
		"~/x/file.txt",
	} {
		t.Run(p, func(t *testing.T) {
			r := ftRun(t, Read(), d.env, map[string]any{"file_path": p})
			if !r.IsError {
				t.Errorf("Read %s was not refused: %s", p, r.Text())
			}
			if text := resultText(t, r); strings.Contains(text, secretMarker) {
				t.Errorf("Read %s returned the denied content: %s", p, text)
			}
		})
	}
	r := ftRun(t, Read(), d.env, map[string]any{"file_path": filepath.Join(d.cwd, "pub/ok.txt")})
	if r.IsError || !strings.Contains(r.Text(), publicMarker) {
		t.Errorf("Read of a file no rule covers failed: %s", r.Text())
	}
}

// TestGrepGlobWithoutFilter: with no filter (nil ReadDenied) nothing is
// dropped, so the tests above fail for the right reason.
func TestGrepGlobWithoutFilter(t *testing.T) {
	d := newDenyTree(t)
	d.env.ReadDenied = nil
	r := ftRun(t, Grep(), d.env, map[string]any{"pattern": "MARKER", "output_mode": "content"})
	if !strings.Contains(r.Text(), secretMarker) {
		t.Errorf("without a filter Grep did not find the marker: %s", r.Text())
	}
	r = ftRun(t, Glob(), d.env, map[string]any{"pattern": "**/.env"})
	if !strings.Contains(r.Text(), ".env") {
		t.Errorf("without a filter Glob did not list .env: %s", r.Text())
	}
}

// BenchmarkSearchDenyFilter measures what the read filter costs a walk of
// GOROOT/src: no filter, and four deny rules of every form (none of which
// matches, so every entry is checked).
func BenchmarkSearchDenyFilter(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no GOROOT/src")
	}
	var rs permission.RuleSet
	for _, r := range []string{"Read(./secrets/**)", "Read(**/.env)", "Read(//nowhere/abs/**)", "Read(~/x)"} {
		v, _ := permission.ParseRule(r)
		_ = rs.Add(permission.SourceCLI, permission.Deny, v)
	}
	ck, err := permission.New(permission.Config{Rules: rs, Dirs: []string{root}, Home: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		filter func(string, ...string) bool
	}{{"nofilter", nil}, {"deny4", ck.ReadDeniedAs}} {
		env := ftEnv(root)
		env.ReadDenied = f.filter
		b.Run("grep/"+f.name, func(b *testing.B) {
			for b.Loop() {
				if r := ftRun(b, Grep(), env, map[string]any{"pattern": `func \(\w+ \*Reader\) Read\(`}); r.IsError {
					b.Fatal(r.Text())
				}
			}
		})
		b.Run("glob/"+f.name, func(b *testing.B) {
			for b.Loop() {
				if r := ftRun(b, Glob(), env, map[string]any{"pattern": "**/*.go"}); r.IsError {
					b.Fatal(r.Text())
				}
			}
		})
	}
}
