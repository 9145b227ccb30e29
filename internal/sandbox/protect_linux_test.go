//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mountStepOn reports whether commands get the mount namespace step
// here (and with it, missing protected paths are enforced).
func mountStepOn() bool {
	ok, _ := ProtectsMissingPaths()
	return ok
}

// needMissingProtected skips the test where missing protected paths
// are not enforced (no mount step).
func needMissingProtected(t *testing.T) {
	t.Helper()
	needMetadata(t)
	if ok, err := ProtectsMissingPaths(); !ok {
		t.Skipf("missing protected paths are not enforced here: %v", err)
	}
}

// protectDir is a working directory (the writable root) whose .claude
// and .mcp.json are protected, and a temp dir.
type protectDir struct {
	cwd, tmp string
	existing bool // .claude/settings.json and .mcp.json exist
}

func newProtectDir(t *testing.T, existing bool) protectDir {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := protectDir{cwd: filepath.Join(root, "cwd"), tmp: filepath.Join(root, "tmp"), existing: existing}
	for _, dir := range []string{d.cwd, d.tmp} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if existing {
		if err := os.Mkdir(filepath.Join(d.cwd, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{".claude/settings.json", ".mcp.json"} {
			if err := os.WriteFile(filepath.Join(d.cwd, f), []byte("orig"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

func (d protectDir) policy() *Policy {
	return &Policy{
		WriteAllow: []string{d.cwd},
		TempDir:    d.tmp,
		Protect:    []string{filepath.Join(d.cwd, ".claude"), filepath.Join(d.cwd, ".mcp.json")},
	}
}

// tree lists dir's entries, recursively, with their type, mode and
// content: what a later program would find there.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a placeholder going away as we look
		}
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, dir+"/")
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			out = append(out, fmt.Sprintf("%s -> %s", rel, dest))
		case fi.IsDir():
			out = append(out, fmt.Sprintf("%s/ %v", rel, fi.Mode().Perm()))
		default:
			b, _ := os.ReadFile(p)
			out = append(out, fmt.Sprintf("%s %v %q", rel, fi.Mode().Perm(), b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settle waits (up to 10 s) for dir's tree to become want, and reports
// the difference if it does not: placeholders go once no process can
// see them, which happens in the background.
func settle(t *testing.T, dir string, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for {
		got = tree(t, dir)
		if cmp.Equal(want, got) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree of %s (-want +got):\n%s", dir, diff)
	}
}

// pristine is the tree of a protectDir before any command.
func (d protectDir) pristine() []string {
	if !d.existing {
		return nil
	}
	return []string{`.claude/ -rwxr-xr-x`, `.claude/settings.json -rw-r--r-- "orig"`, `.mcp.json -rw-r--r-- "orig"`}
}

// TestProtect: a sandboxed command cannot plant or change configuration
// at protected paths, whether they exist or not, by writing, creating,
// renaming the parent away, linking or changing modes; and nothing is
// left behind (no placeholder) once it has exited.
func TestProtect(t *testing.T) {
	needLandlock(t)
	attacks := []struct {
		name, script string
		metadata     bool // only the mount step can refuse it
	}{
		{"write settings", "mkdir -p .claude/agents && echo x > .claude/settings.json", false},
		{"write agent", "mkdir -p .claude/agents; echo x > .claude/agents/x.md", false},
		{"write mcp.json", "echo {} > .mcp.json", false},
		{"append mcp.json", "echo {} >> .mcp.json", false},
		{"rename away", "mv .claude .c2 && mkdir .claude && echo x > .claude/settings.json", false},
		{"remove and remake", "rm -rf .claude .mcp.json; mkdir .claude && echo x > .claude/settings.json", false},
		{"rmdir", "rmdir .claude .mcp.json", false},
		{"symlink mcp.json", "ln -s /tmp/x .mcp.json", false},
		{"symlink over", "ln -sfn /tmp .claude", false},
		{"symlink settings", `ln -s "$TMPDIR/evil" .claude/settings.json`, false},
		{"hard link out", "ln .claude/settings.json hard", false},
		{"hard link in", `echo x > "$TMPDIR/f" && ln "$TMPDIR/f" .mcp.json; echo y > src && ln src .claude/settings.json`, false},
		{"rename over", "echo x > f && mv -f f .mcp.json", false},
		{"python open", `python3 -c "open('.claude/settings.json', 'w').write('x')"`, false},
		{"python rename", `python3 -c "import os; os.rename('.claude', '.c2'); os.mkdir('.claude'); open('.claude/settings.json', 'w').write('x')"`, false},
		{"python mcp.json", `python3 -c "import os; fd = os.open('.mcp.json', os.O_CREAT|os.O_WRONLY, 0o644); os.write(fd, b'x')"`, false},
		{"chmod", "chmod 777 .claude", true},
		{"chmod mcp.json", "chmod 777 .mcp.json", true},
		{"touch", "touch -d 2001-02-03 .claude", true},
	}
	for _, existing := range []bool{true, false} {
		name := "missing"
		if existing {
			name = "existing"
		}
		t.Run(name, func(t *testing.T) {
			if !existing && !mountStepOn() {
				t.Skip("missing protected paths are enforced only with the mount step")
			}
			for _, a := range attacks {
				t.Run(a.name, func(t *testing.T) {
					if a.metadata && !mountStepOn() {
						t.Skip("metadata changes are refused only with the mount step")
					}
					if strings.HasPrefix(a.script, "python3") {
						if _, err := exec.LookPath("python3"); err != nil {
							t.Skip("python3 not found")
						}
					}
					d := newProtectDir(t, existing)
					out, ok := run(t, d.policy(), d.cwd, a.script)
					if ok {
						t.Errorf("%s succeeded: %s", a.script, out)
					}
					// Only the protected names matter: an ordinary file the
					// script made on its way is fine.
					var got []string
					settleProtected(t, d, &got)
					if diff := cmp.Diff(d.pristine(), got); diff != "" {
						t.Errorf("%s planted (-want +got):\n%s\noutput: %s", a.script, diff, out)
					}
				})
			}
		})
	}
}

// settleProtected waits (up to 10 s) for the protected part of d's tree
// (.claude, .mcp.json, and whatever a rename left as .c2) to become
// pristine, and stores it in got.
func settleProtected(t *testing.T, d protectDir, got *[]string) {
	t.Helper()
	want := d.pristine()
	deadline := time.Now().Add(10 * time.Second)
	for {
		*got = slices.DeleteFunc(tree(t, d.cwd), func(e string) bool {
			return !strings.HasPrefix(e, ".claude") && !strings.HasPrefix(e, ".mcp.json") && !strings.HasPrefix(e, ".c2")
		})
		if len(*got) == 0 {
			*got = nil
		}
		if cmp.Equal(want, *got) || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProtectUsable: with the mount step the working directory stays
// usable around the protected paths: new top-level files, removing and
// renaming ordinary ones, reading the protected ones.
func TestProtectUsable(t *testing.T) {
	needLandlock(t)
	if !mountStepOn() {
		t.Skip("without the mount step a directory with a directory hole gets no create right (see carve)")
	}
	for _, existing := range []bool{true, false} {
		d := newProtectDir(t, existing)
		if err := os.WriteFile(filepath.Join(d.cwd, "old.txt"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		script := "touch newfile && echo hi > newfile && mkdir d && mv newfile d/moved && rm old.txt && mv d dir && chmod 700 dir"
		if existing {
			script += " && cat .claude/settings.json .mcp.json"
		}
		out, ok := run(t, d.policy(), d.cwd, script)
		if !ok {
			t.Errorf("existing=%v: %s failed: %s", existing, script, out)
		}
		settle(t, d.cwd, append(slices.Clone(d.pristine()), `dir/ -rwx------`, `dir/moved -rw-r--r-- "hi\n"`))
	}
}

// TestProtectGrandchild: a process the command leaves behind (setsid,
// in the background, possibly in a mount namespace copied from the
// command's) keeps the placeholders bound while it lives, so that it
// cannot plant the configuration once the command has exited; they are
// removed once it is gone.
func TestProtectGrandchild(t *testing.T) {
	needMissingProtected(t)
	const plant = `sleep 1; mkdir -p .claude; echo x > .claude/settings.json; echo x > .mcp.json; touch "$TMPDIR/done"`
	for _, tt := range []struct{ name, prefix string }{
		{"setsid", "setsid"},
		// A user namespace needs no capability; the mount namespace made
		// with it is a copy of the command's, placeholders included.
		{"unshared", "setsid unshare -U -m --propagation unchanged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newProtectDir(t, false)
			if strings.Contains(tt.prefix, "unshare") {
				if out, ok := run(t, d.policy(), d.cwd, tt.prefix+" true"); !ok {
					t.Skipf("cannot unshare in the sandbox: %s", out)
				}
				settle(t, d.cwd, nil)
			}
			done := filepath.Join(d.tmp, "done")
			script := fmt.Sprintf(`(%s sh -c '%s' </dev/null >/dev/null 2>&1 &)`, tt.prefix, plant)
			if out, ok := run(t, d.policy(), d.cwd, script); !ok {
				t.Fatalf("the command failed: %s", out)
			}
			if !exists(filepath.Join(d.cwd, ".claude")) || !exists(filepath.Join(d.cwd, ".mcp.json")) {
				t.Error("the placeholders went while the grandchild lives")
			}
			deadline := time.Now().Add(15 * time.Second)
			for !exists(done) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !exists(done) {
				t.Fatal("the grandchild did not finish")
			}
			if b, err := os.ReadFile(filepath.Join(d.cwd, ".claude", "settings.json")); err == nil {
				t.Errorf("the grandchild planted .claude/settings.json: %q", b)
			}
			settle(t, d.cwd, nil)
		})
	}
}

// TestProtectShared: concurrent commands share a placeholder; it stays
// while any of them runs, and goes after the last.
func TestProtectShared(t *testing.T) {
	needMissingProtected(t)
	d := newProtectDir(t, false)
	long := exec.Command("bash", "-c", "sleep 1.5; mkdir -p .claude; echo x > .claude/settings.json; echo x > .mcp.json")
	long.Dir = d.cwd
	if err := Start(long, d.policy()); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, d.policy(), d.cwd, "true"); !ok {
		t.Fatalf("the short command failed: %s", out)
	}
	time.Sleep(300 * time.Millisecond) // time for the short one's release
	if !exists(filepath.Join(d.cwd, ".claude")) {
		t.Error("a placeholder went while another command holds it")
	}
	if err := long.Wait(); err == nil {
		t.Error("the long command planted its configuration")
	}
	settle(t, d.cwd, nil)
}

// TestProtectParentRenamed: a protected path below a directory of the
// writable root cannot be reached by renaming that directory away; the
// directory stays writable.
func TestProtectParentRenamed(t *testing.T) {
	needMissingProtected(t)
	d := newProtectDir(t, false)
	sub := filepath.Join(d.cwd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := d.policy()
	p.Protect = []string{filepath.Join(sub, ".claude")}
	if out, ok := run(t, p, d.cwd, "mv sub sub2 && mkdir -p sub/.claude && echo x > sub/.claude/settings.json"); ok {
		t.Errorf("renaming the protected path's parent away worked: %s", out)
	}
	if out, ok := run(t, p, d.cwd, "echo hi > sub/f && rm sub/f"); !ok {
		t.Errorf("the protected path's parent is not writable: %s", out)
	}
	settle(t, d.cwd, []string{"sub/ -rwxr-xr-x"})
}

// TestProtectSymlink: with the mount step, a protected path reached
// through a symbolic link inside the writable root (which the command
// could replace) refuses to start; with Landlock alone the link is kept.
func TestProtectSymlink(t *testing.T) {
	needLandlock(t)
	d := newProtectDir(t, false)
	real := filepath.Join(d.cwd, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(d.cwd, ".claude")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "rm .claude && mkdir .claude && echo x > .claude/settings.json")
	cmd.Dir = d.cwd
	out, err := startAndWait(cmd, d.policy())
	if mountStepOn() {
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || cmd.Process != nil {
			t.Errorf("Start with a protected symbolic link: %v (started %v)", err, cmd.Process != nil)
		}
	} else if err == nil {
		t.Errorf("the protected symbolic link was replaced: %s", out)
	}
	if dest, err := os.Readlink(filepath.Join(d.cwd, ".claude")); err != nil || dest != "real" {
		t.Errorf(".claude is no longer the link: %q, %v", dest, err)
	}
}

// TestInspectProtect: where protected paths lead.
func TestInspectProtect(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, dest := range map[string]string{"rel": "a/b", "abs": filepath.Join(root, "c"), "dangling": "a/gone/x"} {
		if err := os.Symlink(dest, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	type info struct {
		Target  string
		Missing bool
		Links   []string
	}
	tests := []struct {
		path string
		want info
	}{
		{"a/b", info{"/a/b", false, nil}},
		{"a/b/.claude", info{"/a/b/.claude", true, nil}},
		{"a/x/y/z", info{"/a/x", true, nil}},
		{"rel/.claude", info{"/a/b/.claude", true, []string{"/rel"}}},
		{"abs", info{"/c", false, []string{"/abs"}}},
		{"dangling", info{"/a/gone", true, []string{"/dangling"}}},
		{"file/x", info{"/file", false, nil}},
		{"a/../c/./", info{"/c", false, nil}},
	}
	for _, tt := range tests {
		got, err := inspectProtect(filepath.Join(root, tt.path))
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		g := info{strings.TrimPrefix(got.target, root), got.missing, nil}
		for _, l := range got.links {
			g.Links = append(g.Links, strings.TrimPrefix(l, root))
		}
		if diff := cmp.Diff(tt.want, g); diff != "" {
			t.Errorf("inspectProtect(%s) (-want +got):\n%s", tt.path, diff)
		}
	}
}

// TestPlanMountsProtect: protected paths are bound (or held by a
// placeholder) even beyond the limit on denied paths, their parents
// inside the root are bound writable, and the roots are no longer carved
// around what the mounts keep.
func TestPlanMountsProtect(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(root, "w")
	if err := os.MkdirAll(filepath.Join(w, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var deny []string
	for i := range maxMountHoles + 2 {
		deny = append(deny, filepath.Join(w, fmt.Sprintf("deny%03d", i)))
	}
	p := &Policy{
		WriteAllow: []string{w},
		WriteDeny:  deny,
		Protect:    []string{filepath.Join(w, "zz", ".claude"), filepath.Join(w, "sub", ".mcp.json"), filepath.Join(root, "elsewhere")},
	}
	m, err := planMounts(p)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, strings.TrimPrefix(p, w))
		}
		return out
	}
	type plan struct{ Holes, Binds, Missing, Protected, Carved []string }
	var wantHoles []string
	for i := range maxMountHoles {
		wantHoles = append(wantHoles, fmt.Sprintf("/deny%03d", i))
	}
	wantHoles = append(wantHoles, "/sub/.mcp.json", "/zz")
	want := plan{
		Holes:     wantHoles,
		Binds:     []string{"/sub"},
		Missing:   []string{"/zz", "/sub/.mcp.json"},
		Protected: []string{"/sub/.mcp.json", "/zz"},
		Carved:    []string{fmt.Sprintf("/deny%03d", maxMountHoles), fmt.Sprintf("/deny%03d", maxMountHoles+1)},
	}
	got := plan{rel(m.holes), rel(m.binds), rel(m.missing), rel(m.protected), rel(m.carved)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("planMounts (-want +got):\n%s", diff)
	}
}

// TestProtectsMissingPaths: missing protected paths are enforced exactly
// where the mount step runs.
func TestProtectsMissingPaths(t *testing.T) {
	got, err := ProtectsMissingPaths()
	meta, _ := MetadataProtected()
	if got != (meta && !testNoMountStep) || got != (err == nil) {
		t.Errorf("ProtectsMissingPaths() = %v, %v; MetadataProtected %v", got, err, meta)
	}
}
