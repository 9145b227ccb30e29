package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// linkTree writes tree under root and makes the symbolic links of links
// (path relative to root → target as written in the link).
func linkTree(t *testing.T, root string, tree, links map[string]string) {
	t.Helper()
	write(t, root, tree)
	for p, target := range links {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.ReplaceAll(target, "/ROOT", root), full); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
}

// TestImportsJudgedOnPhysicalFile: every CLAUDE.md file and import is
// judged on the file it reaches after links — by the caller's Read rules
// (Admit) and by the project boundary — and the project is the repository
// root or, outside a repository, the working directory: never the home
// directory or "/" where the walk up stopped.
func TestImportsJudgedOnPhysicalFile(t *testing.T) {
	// Every case has a home (/ROOT/home) with the user dir, a private
	// key and personal notes, and a file outside the home (/ROOT/etc).
	base := map[string]string{
		"home/.claude/CLAUDE.md":   "User rules.\n",
		"home/.claude/personal.md": "PERSONAL NOTES\n",
		"home/.ssh/id_rsa":         "SSH KEY\n",
		"home/notes.md":            "HOME NOTES\n",
		"etc/passwd":               "root:x:0:0\n",
	}
	// denySecrets is a Read deny rule on every secrets directory.
	denySecrets := func(path string, _ Kind) error {
		if strings.Contains(path, string(filepath.Separator)+"secrets"+string(filepath.Separator)) {
			return os.ErrPermission
		}
		return nil
	}
	for _, tc := range []struct {
		name         string
		tree, links  map[string]string // relative to /ROOT
		cwd          string            // relative to /ROOT
		admit        func(string, Kind) error
		wantFiles    []string // "kind path" relative to /ROOT
		wantProblems []string // with /ROOT for the temporary root
	}{{
		name: "link to a Read-denied file",
		tree: map[string]string{
			"home/repo/.git/HEAD":          "ref: refs/heads/main\n",
			"home/repo/CLAUDE.md":          "Repo @secrets/key.txt @docs/setup.md @docs/guide.md\n",
			"home/repo/secrets/key.txt":    "THE KEY\n",
			"home/repo/docs/guide-real.md": "GUIDE\n",
		},
		links: map[string]string{
			"home/repo/docs/setup.md": "../secrets/key.txt",
			"home/repo/docs/guide.md": "guide-real.md",
		},
		cwd:   "home/repo",
		admit: denySecrets,
		wantFiles: []string{
			"project home/repo/CLAUDE.md",
			"project home/repo/docs/guide.md",
		},
		wantProblems: []string{
			"import @secrets/key.txt in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/secrets/key.txt: permission denied",
			"import @docs/setup.md in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/docs/setup.md: it leads to /ROOT/home/repo/secrets/key.txt: permission denied",
		},
	}, {
		name: "directory link to a Read-denied file",
		tree: map[string]string{
			"home/repo/.git/HEAD":       "ref: refs/heads/main\n",
			"home/repo/CLAUDE.md":       "Repo @vault/key.txt\n",
			"home/repo/secrets/key.txt": "THE KEY\n",
		},
		links:     map[string]string{"home/repo/vault": "secrets"},
		cwd:       "home/repo",
		admit:     denySecrets,
		wantFiles: []string{"project home/repo/CLAUDE.md"},
		wantProblems: []string{
			"import @vault/key.txt in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/vault/key.txt: it leads to /ROOT/home/repo/secrets/key.txt: permission denied",
		},
	}, {
		name: "CLAUDE.md found by location is a link to a Read-denied file",
		tree: map[string]string{
			"home/repo/.git/HEAD":       "ref: refs/heads/main\n",
			"home/repo/secrets/key.txt": "THE KEY\n",
		},
		links: map[string]string{"home/repo/CLAUDE.md": "secrets/key.txt"},
		cwd:   "home/repo",
		admit: denySecrets,
		wantProblems: []string{
			"CLAUDE.md file /ROOT/home/repo/CLAUDE.md is left out: it leads to /ROOT/home/repo/secrets/key.txt: permission denied",
		},
	}, {
		name: "user file importing a link to a Read-denied file",
		tree: map[string]string{
			"home/.claude/CLAUDE.md": "User @~/alias.md\n",
			"home/secrets/key.txt":   "THE KEY\n",
			"home/repo/.git/HEAD":    "ref: refs/heads/main\n",
			"home/repo/CLAUDE.md":    "Repo.\n",
		},
		links:     map[string]string{"home/alias.md": "secrets/key.txt"},
		cwd:       "home/repo",
		admit:     denySecrets,
		wantFiles: []string{"user home/.claude/CLAUDE.md", "project home/repo/CLAUDE.md"},
		wantProblems: []string{
			"import @~/alias.md in /ROOT/home/.claude/CLAUDE.md is left out: /ROOT/home/alias.md: it leads to /ROOT/home/secrets/key.txt: permission denied",
		},
	}, {
		name: "links leading outside a repository",
		tree: map[string]string{
			"home/repo/.git/HEAD":    "ref: refs/heads/main\n",
			"home/repo/CLAUDE.md":    "Repo @docs/key.md @docs/pw.md @docs/personal.md @docs/ok.md\n",
			"home/repo/docs/real.md": "INSIDE\n",
		},
		links: map[string]string{
			"home/repo/docs/key.md":      "../../.ssh/id_rsa",
			"home/repo/docs/pw.md":       "/ROOT/etc/passwd",
			"home/repo/docs/personal.md": "/ROOT/home/.claude/personal.md",
			"home/repo/docs/ok.md":       "real.md",
			"home/repo/CLAUDE.local.md":  "../.ssh/id_rsa",
		},
		cwd: "home/repo",
		wantFiles: []string{
			"project home/repo/CLAUDE.md",
			"project home/repo/docs/personal.md",
			"project home/repo/docs/ok.md",
		},
		wantProblems: []string{
			"import @docs/key.md in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/docs/key.md: it leads to /ROOT/home/.ssh/id_rsa: a project file may only import files inside the project",
			"import @docs/pw.md in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/docs/pw.md: it leads to /ROOT/etc/passwd: a project file may only import files inside the project",
			"CLAUDE.md file /ROOT/home/repo/CLAUDE.local.md is left out: it leads to /ROOT/home/.ssh/id_rsa: a project file may only lead to files inside the project",
		},
	}, {
		name: "not a repository: the working directory is the project",
		tree: map[string]string{
			"home/dl/CLAUDE.md":            "Above the project @../notes.md @proj/inside.md\n",
			"home/dl/proj/CLAUDE.md":       "Archive @~/.ssh/id_rsa @/ROOT/etc/passwd @../outside.md @inside.md @sub/deep.md @~/.claude/personal.md\n",
			"home/dl/outside.md":           "OUTSIDE\n",
			"home/dl/proj/inside.md":       "INSIDE\n",
			"home/dl/proj/sub/deep.md":     "DEEP\n",
			"home/dl/proj/CLAUDE.local.md": "Local @../../notes.md\n",
		},
		cwd: "home/dl/proj",
		wantFiles: []string{
			"project home/dl/CLAUDE.md",
			"project home/dl/proj/inside.md",
			"project home/dl/proj/CLAUDE.md",
			"project home/dl/proj/sub/deep.md",
			"project home/.claude/personal.md",
			"local home/dl/proj/CLAUDE.local.md",
		},
		wantProblems: []string{
			"import @../notes.md in /ROOT/home/dl/CLAUDE.md is left out: /ROOT/home/notes.md: a project file may only import files inside the project",
			"import @~/.ssh/id_rsa in /ROOT/home/dl/proj/CLAUDE.md is left out: /ROOT/home/.ssh/id_rsa: a project file may only import files inside the project",
			"import @/ROOT/etc/passwd in /ROOT/home/dl/proj/CLAUDE.md is left out: /ROOT/etc/passwd: a project file may only import files inside the project",
			"import @../outside.md in /ROOT/home/dl/proj/CLAUDE.md is left out: /ROOT/home/dl/outside.md: a project file may only import files inside the project",
			"import @../../notes.md in /ROOT/home/dl/proj/CLAUDE.local.md is left out: /ROOT/home/notes.md: a project file may only import files inside the project",
		},
	}, {
		name: "a repository at the home directory does not make the home a project",
		tree: map[string]string{
			"home/.git/HEAD":      "ref: refs/heads/main\n",
			"home/proj/CLAUDE.md": "Proj @~/.ssh/id_rsa @../notes.md @in.md\n",
			"home/proj/in.md":     "INSIDE\n",
		},
		cwd:       "home/proj",
		wantFiles: []string{"project home/proj/CLAUDE.md", "project home/proj/in.md"},
		wantProblems: []string{
			"import @~/.ssh/id_rsa in /ROOT/home/proj/CLAUDE.md is left out: /ROOT/home/.ssh/id_rsa: a project file may only import files inside the project",
			"import @../notes.md in /ROOT/home/proj/CLAUDE.md is left out: /ROOT/home/notes.md: a project file may only import files inside the project",
		},
	}, {
		name: "a repository: imports from its root down, and the user dir",
		tree: map[string]string{
			"home/repo/.git/HEAD":     "ref: refs/heads/main\n",
			"home/repo/CLAUDE.md":     "Repo @docs/a.md @~/.claude/personal.md @../notes.md\n",
			"home/repo/docs/a.md":     "A\n",
			"home/repo/sub/CLAUDE.md": "Sub @../docs/b.md\n",
			"home/repo/docs/b.md":     "B\n",
		},
		cwd: "home/repo/sub",
		wantFiles: []string{
			"project home/repo/CLAUDE.md",
			"project home/repo/docs/a.md",
			"project home/.claude/personal.md",
			"project home/repo/sub/CLAUDE.md",
			"project home/repo/docs/b.md",
		},
		wantProblems: []string{
			"import @../notes.md in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/notes.md: a project file may only import files inside the project",
		},
	}, {
		name: "the user file may import anything",
		tree: map[string]string{
			"home/.claude/CLAUDE.md": "User @~/notes.md @/ROOT/etc/passwd @~/alias.md\n",
			"home/proj/CLAUDE.md":    "Proj.\n",
		},
		links:     map[string]string{"home/alias.md": "/ROOT/etc/passwd"},
		cwd:       "home/proj",
		wantFiles: []string{"user home/.claude/CLAUDE.md", "user home/notes.md", "user etc/passwd", "project home/proj/CLAUDE.md"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tree := map[string]string{}
			for p, c := range base {
				tree[p] = c
			}
			for p, c := range tc.tree {
				tree[p] = strings.ReplaceAll(c, "/ROOT", root)
			}
			linkTree(t, root, tree, tc.links)
			home := filepath.Join(root, "home")
			res := Load(Options{Cwd: filepath.Join(root, tc.cwd), Home: home, User: true, Project: true, Local: true, Admit: tc.admit})
			want := tc.wantFiles
			if _, own := tc.tree["home/.claude/CLAUDE.md"]; !own {
				want = append([]string{"user home/.claude/CLAUDE.md"}, want...)
			}
			if d := cmp.Diff(want, rel(root, res.Files)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			var probs []string
			for _, p := range res.Problems {
				probs = append(probs, strings.ReplaceAll(p, root, "/ROOT"))
			}
			if d := cmp.Diff(tc.wantProblems, probs); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			for _, f := range res.Files {
				for _, secret := range []string{"THE KEY", "SSH KEY", "OUTSIDE"} {
					if strings.Contains(f.Text, secret) {
						t.Errorf("%s brought in %q", f.Path, secret)
					}
				}
			}
		})
	}
}

// TestProjectRoot: the repository root, not above home; else cwd.
func TestProjectRoot(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"home/repo/.git/HEAD": "x",
		"home/repo/a/b/x.md":  "x",
		"home/plain/a/x.md":   "x",
		"other/.git/HEAD":     "x",
		"other/home2/p/x.md":  "x",
		"home3/.git/HEAD":     "x",
		"home3/p/x.md":        "x",
	})
	j := func(p string) string { return filepath.Join(root, p) }
	for _, tc := range []struct{ cwd, home, want string }{
		{"home/repo/a/b", "home", "home/repo"},
		{"home/repo", "home", "home/repo"},
		{"home/plain/a", "home", "home/plain/a"},
		{"other/home2/p", "other/home2", "other/home2/p"}, // the repository is above home
		{"home3/p", "home3", "home3/p"},                   // the repository is the home
	} {
		if got := ProjectRoot(j(tc.cwd), j(tc.home)); got != j(tc.want) {
			t.Errorf("ProjectRoot(%s, %s) = %s, want %s", tc.cwd, tc.home, got, j(tc.want))
		}
	}
}

// TestLinkSwappedAfterJudgement: a file replaced by a link (to a denied
// file) after it was judged is not read through the link.
func TestLinkSwappedAfterJudgement(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	linkTree(t, root, map[string]string{
		"home/repo/.git/HEAD":       "x",
		"home/repo/CLAUDE.md":       "Repo @docs/a.md\n",
		"home/repo/docs/a.md":       "A\n",
		"home/repo/secrets/key.txt": "THE KEY\n",
	}, nil)
	a := filepath.Join(root, "home/repo/docs/a.md")
	testAfterJudge = func(phys string) {
		if phys == a {
			if err := os.Remove(a); err != nil {
				t.Error(err)
			}
			if err := os.Symlink("../secrets/key.txt", a); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testAfterJudge = nil })
	res := Load(Options{Cwd: filepath.Join(root, "home/repo"), Home: filepath.Join(root, "home"), Project: true,
		Admit: func(path string, _ Kind) error {
			if strings.Contains(path, "secrets") {
				return os.ErrPermission
			}
			return nil
		}})
	if d := cmp.Diff([]string{"project home/repo/CLAUDE.md"}, rel(root, res.Files)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	want := []string{"import @docs/a.md in /ROOT/home/repo/CLAUDE.md is left out: /ROOT/home/repo/docs/a.md: " + ErrMoved.Error()}
	var probs []string
	for _, p := range res.Problems {
		probs = append(probs, strings.ReplaceAll(p, root, "/ROOT"))
	}
	if d := cmp.Diff(want, probs); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}
