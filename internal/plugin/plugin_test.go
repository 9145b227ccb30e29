package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestPluginRootNotCode: a plugin directory whose name is shell syntax
// reaches a hook as data: the hook sees the exact path and nothing in
// the name runs.
func TestPluginRootNotCode(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, `kit"; touch pwned; echo "$(touch pwned2)`)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, err := (&Plugin{Root: root}).WithRootEnv(`printf %s "$CLAUDE_PLUGIN_ROOT" > "` + filepath.Join(base, "seen") + `"`)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("bash", "-c", cmd)
	c.Dir = base
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("hook command failed: %v: %s", err, out)
	}
	seen, err := os.ReadFile(filepath.Join(base, "seen"))
	if err != nil || string(seen) != root {
		t.Errorf("the hook saw %q (%v), want %q", seen, err, root)
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(base, f)); err == nil {
			t.Errorf("the directory's name ran as code: %s exists", f)
		}
	}
}

// TestOpen: a directory without a manifest is the plugin of its name; a
// manifest names it and lists component paths, each kept inside the
// plugin (one leading out is reported and left out), and fields the
// session does not read are reported.
func TestOpen(t *testing.T) {
	base := t.TempDir()
	bare := filepath.Join(base, "bare")
	kit := filepath.Join(base, "kit-dir")
	for _, d := range []string{bare, filepath.Join(kit, ".claude-plugin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `{"name": "kit", "version": "1.2", "commands": ["extra", "../out"], "color": "blue"}`
	if err := os.WriteFile(filepath.Join(kit, ".claude-plugin", "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(bare, nil)
	if err != nil || p.Name != "bare" || p.Manifest != "" {
		t.Fatalf("Open(bare) = %+v, %v", p, err)
	}
	var reports []string
	p, err = Open(kit, func(text string) { reports = append(reports, text) })
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "kit" || p.Version != "1.2" || len(p.Commands) != 1 || p.Commands[0] != filepath.Join(kit, "extra") {
		t.Errorf("Open(kit) = %+v", p)
	}
	if len(reports) != 2 {
		t.Errorf("reports %q, want the unread field and the path leading out", reports)
	}
	if _, err := Open(filepath.Join(base, "missing"), nil); err == nil {
		t.Error("Open of a missing directory succeeded")
	}
}

// TestValidName holds validName to the pattern it spells out by hand,
// ^[A-Za-z0-9][A-Za-z0-9._-]*$, on names built from the bytes that matter.
func TestValidName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	parts := []string{"", "a", "Z", "0", "9", ".", "_", "-", " ", "/", "é", "\n", "@", ":"}
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				name := a + b + c
				if got, want := validName(name), re.MatchString(name); got != want {
					t.Errorf("validName(%q) = %v, the pattern says %v", name, got, want)
				}
			}
		}
	}
}
