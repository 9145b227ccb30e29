package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTrustedEnv: EnvLayers records each file's env; TrustedEnv leaves
// out what the filter rejects and lets a lower file's value stand.
func TestTrustedEnv(t *testing.T) {
	root := t.TempDir()
	cwd, cfg := filepath.Join(root, "proj"), filepath.Join(root, "cfg")
	write := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cfg, "settings.json"), `{"env":{"URL":"user","A":"user"}}`)
	write(filepath.Join(cwd, ".claude", "settings.json"), `{"env":{"URL":"project","B":"project"}}`)
	st, err := Load(Options{Cwd: cwd, Home: root, ConfigDir: cfg, ManagedPath: filepath.Join(root, "none.json")})
	if err != nil {
		t.Fatal(err)
	}
	if st.Env["URL"] != "project" {
		t.Errorf("Env[URL] = %q, want project (Env is unfiltered)", st.Env["URL"])
	}
	env, ignored := st.TrustedEnv(func(src Source, key string) bool { return RepoShipped(src) && key == "URL" })
	if diff := cmp.Diff(map[string]string{"URL": "user", "A": "user", "B": "project"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]IgnoredEnv{{Key: "URL", Source: ProjectSettings, File: ".claude/settings.json"}}, ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
}
