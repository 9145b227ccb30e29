package memory

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// write creates the files of tree (path relative to root → content).
func write(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for p, content := range tree {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree is a home directory holding the user file and a repository whose
// subdirectory is the working directory.
var tree = map[string]string{
	"home/.claude/CLAUDE.md":          "User rules.\n",
	"home/repo/.git/HEAD":             "ref: refs/heads/main\n",
	"home/repo/CLAUDE.md":             "Repo rules. See @docs/style.md and @./missing.md.\n",
	"home/repo/docs/style.md":         "Style guide, which pulls in @../CLAUDE.md again and @more/deep.md\n",
	"home/repo/docs/more/deep.md":     "Deep notes.\n",
	"home/repo/sub/CLAUDE.md":         "Sub rules.\n```\n@not/an/import.md\n```\nAlso `@code/span.md` is not one.\n",
	"home/repo/sub/.claude/CLAUDE.md": "Sub dot-claude rules, with @~/.claude/personal.md\n",
	"home/repo/sub/CLAUDE.local.md":   "My local rules.\n",
	"home/.claude/personal.md":        "Personal notes.\n",
	"home/CLAUDE.md":                  "Above the repository: never loaded.\n",
}

func load(t *testing.T, root string, o Options) Result {
	t.Helper()
	if o.Cwd == "" {
		o.Cwd = filepath.Join(root, "home/repo/sub")
	}
	o.Home = filepath.Join(root, "home")
	return Load(o)
}

func rel(root string, files []File) []string {
	var out []string
	for _, f := range files {
		r, _ := filepath.Rel(root, f.Path)
		out = append(out, string(f.Kind)+" "+r)
	}
	return out
}

func TestLoadOrderKindsAndProblems(t *testing.T) {
	root := t.TempDir()
	write(t, root, tree)
	res := load(t, root, Options{User: true, Project: true, Local: true})
	want := []string{
		"user home/.claude/CLAUDE.md",
		"project home/repo/CLAUDE.md",
		"project home/repo/docs/style.md",
		"project home/repo/docs/more/deep.md",
		"project home/repo/sub/CLAUDE.md",
		"project home/repo/sub/.claude/CLAUDE.md",
		"project home/.claude/personal.md",
		"local home/repo/sub/CLAUDE.local.md",
	}
	if d := cmp.Diff(want, rel(root, res.Files)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if got := res.Files[2].ImportedFrom; got != filepath.Join(root, "home/repo/CLAUDE.md") {
		t.Errorf("style.md imported from %q", got)
	}
	probs := strings.Join(res.Problems, "\n")
	for _, w := range []string{"@./missing.md in " + filepath.Join(root, "home/repo/CLAUDE.md") + " is left out: " + filepath.Join(root, "home/repo/missing.md") + ": no such file",
		"@../CLAUDE.md in " + filepath.Join(root, "home/repo/docs/style.md") + " is left out: it leads back to"} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems lack %q:\n%s", w, probs)
		}
	}
	if len(res.Problems) != 2 {
		t.Errorf("want 2 problems, got:\n%s", probs)
	}
}

func TestLoadSources(t *testing.T) {
	root := t.TempDir()
	write(t, root, tree)
	for _, tc := range []struct {
		name                 string
		user, project, local bool
		want                 int
	}{
		{"none", false, false, false, 0},
		{"user", true, false, false, 1},
		{"project", false, true, false, 6},
		{"local", false, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := load(t, root, Options{User: tc.user, Project: tc.project, Local: tc.local})
			if len(res.Files) != tc.want {
				t.Errorf("%d files, want %d: %q", len(res.Files), tc.want, rel(root, res.Files))
			}
			for _, f := range res.Files {
				if (f.Kind == User && !tc.user) || (f.Kind == Project && !tc.project) || (f.Kind == Local && !tc.local) {
					t.Errorf("%s loaded as %s", f.Path, f.Kind)
				}
			}
		})
	}
}

// TestWalkStopsAtHome: outside a repository the walk goes up to the home
// directory and no further; the user file is never a project file.
func TestWalkStopsAtHome(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"CLAUDE.md":              "above home",
		"home/CLAUDE.md":         "home project file",
		"home/.claude/CLAUDE.md": "user file",
		"home/a/b/CLAUDE.md":     "cwd file",
	})
	res := load(t, root, Options{Cwd: filepath.Join(root, "home/a/b"), Project: true})
	if d := cmp.Diff([]string{"project home/CLAUDE.md", "project home/a/b/CLAUDE.md"}, rel(root, res.Files)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

func TestImportLimits(t *testing.T) {
	root := t.TempDir()
	chain := map[string]string{"home/repo/.git/HEAD": "x", "home/repo/CLAUDE.md": "@d1.md"}
	for i := 1; i <= 7; i++ {
		chain[filepath.Join("home/repo", "d"+string(rune('0'+i))+".md")] = "level @d" + string(rune('0'+i+1)) + ".md"
	}
	chain["home/repo/bin.md"] = "a\x00b"
	chain["home/repo/CLAUDE.local.md"] = "@bin.md @dir.md @~/nohome.md"
	write(t, root, chain)
	if err := os.Mkdir(filepath.Join(root, "home/repo/dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := load(t, root, Options{Cwd: filepath.Join(root, "home/repo"), Project: true, Local: true, MaxDepth: 3})
	if len(res.Files) != 5 {
		t.Errorf("want CLAUDE.md, 3 levels of imports and CLAUDE.local.md, got %q", rel(root, res.Files))
	}
	probs := strings.Join(res.Problems, "\n")
	local := filepath.Join(root, "home/repo/CLAUDE.local.md")
	for _, w := range []string{"@d4.md in " + filepath.Join(root, "home/repo/d3.md") + " is left out: imports nest at most 3 deep",
		"@bin.md in " + local + " is left out: " + filepath.Join(root, "home/repo/bin.md") + ": it is not a UTF-8 text file",
		"@dir.md in " + local + " is left out: " + filepath.Join(root, "home/repo/dir.md") + ": it is a directory",
		"@~/nohome.md in " + local + " is left out: " + filepath.Join(root, "home/nohome.md") + ": a project file may only import files inside the project"} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems lack %q:\n%s", w, probs)
		}
	}
}

func TestExcludes(t *testing.T) {
	root := t.TempDir()
	write(t, root, tree)
	res := load(t, root, Options{User: true, Project: true, Local: true,
		Excludes: []string{"**/sub/CLAUDE.md", "**/docs/**", "[bad"}})
	for _, f := range res.Files {
		if strings.HasSuffix(f.Path, filepath.Join("sub", "CLAUDE.md")) && !strings.Contains(f.Path, ".claude") || strings.Contains(f.Path, "docs") {
			t.Errorf("%s was excluded but loaded", f.Path)
		}
	}
	if len(res.Files) != 5 {
		t.Errorf("files %q", rel(root, res.Files))
	}
	if !strings.Contains(strings.Join(res.Problems, "\n"), `pattern "[bad" is not a valid glob`) {
		t.Errorf("problems %q", res.Problems)
	}
}

// TestRenderGolden: the rendered block of the tree, with its temporary
// root written as /ROOT. Run with -update to rewrite the golden file.
func TestRenderGolden(t *testing.T) {
	root := t.TempDir()
	write(t, root, tree)
	got := strings.ReplaceAll(Render(load(t, root, Options{User: true, Project: true, Local: true}).Files), root, "/ROOT")
	golden := filepath.Join("testdata", "render.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("rendered block (-golden +got):\n%s", d)
	}
	if Render(nil) != "" {
		t.Error("no files must render as nothing")
	}
}

func TestImports(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"@a.md", []string{"a.md"}},
		{"see @docs/x.md, and @~/y.md.", []string{"docs/x.md", "~/y.md"}},
		{"(@/abs/z.md)", nil}, // "@" must start a word
		{"mail me@example.com or ping @alice", nil},
		{"`@in/code.md` @out/code.md", []string{"out/code.md"}},
		{"```\n@fenced/a.md\n```\n@after/b.md", []string{"after/b.md"}},
		{"~~~md\n@fenced/a.md\n~~~", nil},
		{"@my\\ file.md", []string{"my file.md"}},
		{"@https://example.com/x.md @...", nil},
		{"\t@tab/x.md\r\n@cr/y.md\r", []string{"tab/x.md", "cr/y.md"}},
	} {
		if d := cmp.Diff(tc.want, Imports(tc.text)); d != "" {
			t.Errorf("Imports(%q) (-want +got):\n%s", tc.text, d)
		}
	}
}

func FuzzImports(f *testing.F) {
	for _, s := range []string{"@a.md", "x @b/c.md y", "```\n@d.md\n```", "`@e.md`", "@f\\ g.md", "@~/h", "@@x.y", "@.", "a\n~~~\n@q/r\n~~~\n@s.t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range Imports(text) {
			if p == "" || strings.ContainsAny(p, "\t\r\n") {
				t.Fatalf("import %q from %q", p, text)
			}
			if !strings.ContainsAny(p, "/.") && p[0] != '~' {
				t.Fatalf("import %q does not look like a path", p)
			}
			if !strings.Contains(p, " ") && !strings.Contains(text, "@"+p) {
				t.Fatalf("import %q is not in the text %q", p, text)
			}
		}
	})
}

// TestImportBoundaries: a project or local file cannot import files from
// outside the project (a checked-in CLAUDE.md must not send ~/.ssh to the
// model); the user's own file can; Admit leaves out what the caller's
// rules deny, found or imported.
func TestImportBoundaries(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"home/.claude/CLAUDE.md":    "User rules @~/private/notes.md\n",
		"home/private/notes.md":     "private notes\n",
		"home/.ssh/id_rsa":          "SECRET KEY\n",
		"home/repo/.git/HEAD":       "ref: refs/heads/main\n",
		"home/repo/CLAUDE.md":       "Repo @~/.ssh/id_rsa and @../private/notes.md and @docs/ok.md\n",
		"home/repo/CLAUDE.local.md": "Local @/etc/hostname\n",
		"home/repo/docs/ok.md":      "inside is fine\n",
		"home/repo/denied.md":       "denied text\n",
		"home/repo/sub/CLAUDE.md":   "Sub @../denied.md\n",
	})
	home := filepath.Join(root, "home")
	res := Load(Options{Cwd: filepath.Join(home, "repo", "sub"), Home: home, User: true, Project: true, Local: true,
		Admit: func(path string, k Kind) error {
			if strings.HasSuffix(path, "denied.md") {
				return os.ErrPermission
			}
			return nil
		}})
	var texts []string
	for _, f := range res.Files {
		texts = append(texts, strings.TrimSpace(f.Text))
	}
	all := strings.Join(texts, "\n")
	for _, banned := range []string{"SECRET KEY", "denied text"} {
		if strings.Contains(all, banned) {
			t.Errorf("loaded %q:\n%s", banned, all)
		}
	}
	for _, want := range []string{"private notes", "inside is fine"} {
		if !strings.Contains(all, want) {
			t.Errorf("did not load %q:\n%s", want, all)
		}
	}
	problems := strings.Join(res.Problems, "\n")
	for _, want := range []string{"id_rsa", "hostname", "denied.md"} {
		if !strings.Contains(problems, want) {
			t.Errorf("no problem reported for %s:\n%s", want, problems)
		}
	}
	// The project's own import of the user's notes is left out too, even
	// though the user file loads them.
	if n := strings.Count(all, "private notes"); n != 1 {
		t.Errorf("private notes loaded %d times", n)
	}
}
