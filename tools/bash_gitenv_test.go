//go:build unix

package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plantBareRepo lays out, in dir/name, what a model could write with the
// file tools: a directory that looks like a bare repository, whose config
// gives it a work tree and a core.fsmonitor command that creates marker.
func plantBareRepo(t *testing.T, dir, name, marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(dir, name)
	for _, args := range [][]string{
		{"init", "-q", "--bare", repo},
		{"-C", repo, "config", "core.bare", "false"},
		{"-C", repo, "config", "core.worktree", dir},
		{"-C", repo, "config", "core.fsmonitor", "touch '" + marker + "'; false"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestBashGitPlantedBareRepo: git status in a planted bare-repository
// layout runs its core.fsmonitor command when git runs plainly (so the
// layout is a real threat), and does not when it runs through Bash.
func TestBashGitPlantedBareRepo(t *testing.T) {
	env := bashTestEnv(t)
	marker := filepath.Join(env.Cwd, "MARK")
	plantBareRepo(t, env.Cwd, "planted", marker)

	control := exec.Command("git", "status")
	control.Dir = filepath.Join(env.Cwd, "planted")
	_ = control.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: plain git status did not run the planted fsmonitor (%v): the test proves nothing", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	for _, command := range []string{"cd planted && git status", "git -C planted status", "cd planted && git diff && git log -1"} {
		r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": command})
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q ran the planted core.fsmonitor command; output: %s", command, r.Text())
		}
		if strings.Contains(command, "status") && !strings.Contains(r.Text(), "safe.bareRepository") {
			t.Errorf("%q: want git's refusal of the bare repository, got %q", command, r.Text())
		}
	}
}

// TestBashGitConfigCountExtended: the hardening is added after the
// configuration the environment already passes to git, which still holds.
func TestBashGitConfigCountExtended(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	env := bashTestEnv(t)
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "color.ui")
	t.Setenv("GIT_CONFIG_VALUE_0", "never")
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "git config --get color.ui; git config --get safe.bareRepository; git config --get core.fsmonitor; git config --get core.hooksPath; echo $GIT_CONFIG_COUNT"})
	if diff := cmp.Diff("never\nexplicit\nfalse\n/dev/null\n4", r.Text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWithGitHardening(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string // the GIT_CONFIG entries that git will see
	}{
		{"none", []string{"HOME=/h"}, []string{
			"GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_VALUE_0=explicit",
			"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=false",
			"GIT_CONFIG_KEY_2=core.hooksPath", "GIT_CONFIG_VALUE_2=/dev/null", "GIT_CONFIG_COUNT=3"}},
		{"extends", []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1", "GIT_CONFIG_KEY_1=c.d", "GIT_CONFIG_VALUE_1=2"}, []string{
			"GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1", "GIT_CONFIG_KEY_1=c.d", "GIT_CONFIG_VALUE_1=2",
			"GIT_CONFIG_KEY_2=safe.bareRepository", "GIT_CONFIG_VALUE_2=explicit",
			"GIT_CONFIG_KEY_3=core.fsmonitor", "GIT_CONFIG_VALUE_3=false",
			"GIT_CONFIG_KEY_4=core.hooksPath", "GIT_CONFIG_VALUE_4=/dev/null", "GIT_CONFIG_COUNT=5"}},
		{"bogus count", []string{"GIT_CONFIG_COUNT=x"}, []string{
			"GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_VALUE_0=explicit",
			"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=false",
			"GIT_CONFIG_KEY_2=core.hooksPath", "GIT_CONFIG_VALUE_2=/dev/null", "GIT_CONFIG_COUNT=3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// exec.Cmd keeps the last value of a repeated variable.
			got := map[string]string{}
			for _, kv := range withGitHardening(tc.env) {
				if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_CONFIG_") {
					got[k] = kv
				}
			}
			want := map[string]string{}
			for _, kv := range tc.want {
				k, _, _ := strings.Cut(kv, "=")
				want[k] = kv
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
