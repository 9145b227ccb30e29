package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectKey(t *testing.T) {
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "")
	long := strings.Repeat("/abcdefghij", 25)
	longKey := sanitize(long)
	tests := []struct {
		cwd, want string
	}{
		{"/Users/me/proj", "-Users-me-proj"},
		{"/a/b_c/work", "-a-b-c-work"},
		{"/tmp/my project.v2", "-tmp-my-project-v2"},
		{"/home/zoë", "-home-zo-"},
		{"/home/🙂", "-home---"},
		{long, longKey},
	}
	for _, tc := range tests {
		if got := ProjectKey(tc.cwd); got != tc.want {
			t.Errorf("ProjectKey(%q) = %q, want %q", tc.cwd, got, tc.want)
		}
	}
	if len(longKey) <= maxProjectKey || longKey[maxProjectKey] != '-' || longKey[:maxProjectKey] != sanitize(long)[:maxProjectKey] {
		t.Errorf("long key %q", longKey)
	}
	// Known values of the 32-bit string hash.
	for s, want := range map[string]string{"": "0", "a": "2p", "hello": "1n1e4y"} {
		if got := jsHash(s); got != want {
			t.Errorf("jsHash(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestProjectKeySymlink(t *testing.T) {
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "")
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if ProjectKey(link) != ProjectKey(real) {
		t.Errorf("ProjectKey(%s) = %s, want that of %s: %s", link, ProjectKey(link), real, ProjectKey(real))
	}
}

func TestProjectDirNameEnv(t *testing.T) {
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "my_proj")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if got := ProjectKey("/x/y"); got != "-x-y" {
		t.Errorf("without CLAUDE_CONFIG_DIR: %s", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	if got := ProjectKey("/x/y"); got != "my_proj" {
		t.Errorf("with CLAUDE_CONFIG_DIR: %s", got)
	}
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "../bad")
	if got := ProjectKey("/x/y"); got != "-x-y" {
		t.Errorf("with an invalid name: %s", got)
	}
}

func TestDefaultConfigDir(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "/etc/cc")
	if got := DefaultConfigDir(); got != "/etc/cc" {
		t.Errorf("DefaultConfigDir = %s", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("HOME", "/home/someone")
	if got := DefaultConfigDir(); got != "/home/someone/.claude" {
		t.Errorf("DefaultConfigDir = %s", got)
	}
	if got := Path("", "/w", "s"); got != "/home/someone/.claude/projects/-w/s.jsonl" {
		t.Errorf("Path with the default config dir = %s", got)
	}
}

// TestFindLongProject finds a session in a project directory whose long
// name has a different hash suffix (as the reference CLI writes it).
func TestFindLongProject(t *testing.T) {
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "")
	config := t.TempDir()
	cwd := "/" + strings.Repeat("deep/", 60)
	key := ProjectKey(cwd)
	cliDir := filepath.Join(ProjectsDir(config), key[:maxProjectKey]+"-otherhash")
	const id = "66666666-6666-4666-8666-666666666666"
	copyTestdata(t, "branched.jsonl", filepath.Join(cliDir, id+".jsonl"))
	if p, err := Find(config, id); err != nil || filepath.Dir(p) != cliDir {
		t.Errorf("Find = %s, %v", p, err)
	}
	l, err := List(config, cwd, ListOptions{})
	if err != nil || len(l) != 1 {
		t.Errorf("List of the long cwd = %v, %v", l, err)
	}
}

func TestKeyForPath(t *testing.T) {
	config := "/c"
	tests := []struct {
		path string
		want Key
		bad  bool
	}{
		{"/c/projects/-w/s1.jsonl", Key{ProjectKey: "-w", SessionID: "s1"}, false},
		{"/c/projects/-w/s1/subagents/agent-a.jsonl", Key{ProjectKey: "-w", SessionID: "s1", Subpath: "subagents/agent-a"}, false},
		{"/c/projects/-w/s1/subagents/workflows/r/agent-b.jsonl", Key{ProjectKey: "-w", SessionID: "s1", Subpath: "subagents/workflows/r/agent-b"}, false},
		{"/c/other/s1.jsonl", Key{}, true},
		{"/c/projects/s1.jsonl", Key{}, true},
		{"/c/projects/-w/s1.txt", Key{}, true},
	}
	for _, tc := range tests {
		got, err := KeyForPath(config, tc.path)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("KeyForPath(%s) = %+v, %v", tc.path, got, err)
		}
	}
}
