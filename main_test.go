package agentloop_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// userHome is the home directory the process started with, before TestMain
// replaced it: for the go command a test runs, whose build and module
// caches live there.
var userHome = os.Getenv("HOME")

// TestMain gives the tests a home directory of their own, so settings files
// and transcripts of the machine's user neither leak in nor get written.
func TestMain(m *testing.M) {
	// Many tests run sessions in bypassPermissions, and CI runs them as
	// root, which agentloop refuses unless IS_SANDBOX is exactly 1
	// (bypass_root.go): set it to 1 for the whole run, whatever the
	// environment had (unset, or another value such as "yes"). Tests of
	// the refusal clear it themselves.
	os.Setenv("IS_SANDBOX", "1")
	home, err := os.MkdirTemp("", "agentloop-test-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("CLAUDE_CONFIG_DIR")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// stackLimit is the stack a turn's goroutine must fit in. A goroutine's
// stack is a power of two that only shrinks when a collection finds it a
// quarter used, so whatever a session's goroutine reaches once it keeps:
// 8 KiB against 16 KiB is 8 MiB per thousand sessions, held for their
// lifetime (docs/benchmarks.md, "Round 7").
const stackLimit = 8 << 10

// TestTurnFitsSmallStack runs a whole turn in a child process
// (testdata/stackprobe, built without the race detector) whose goroutines
// may not grow past stackLimit: the prompt's hook points, a streamed Read
// call whose input the schema checks, the permission checker resolving its
// path in the default mode, the tool, its result, the final reply, the
// transcript's lines, over the real provider and HTTP/1.1 to a scripted
// server in this process. It
// fails when a frame on those paths grows enough to push a turn's
// goroutine, or the tool's, into a 16 KiB stack.
func TestTurnFitsSmallStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a child process")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "stackprobe")
	build := exec.Command("go", "build", "-o", bin, "./testdata/stackprobe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if userHome != "" {
		build.Env = append(build.Env, "HOME="+userHome) // the caches of the user's home (see TestMain)
	}
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte(strings.Repeat("a line of notes\n", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	turn := []agentlooptest.Reply{
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": file}),
		agentlooptest.Text("Read it."),
	}
	s := agentlooptest.NewTB(t, append(turn, turn...)...) // the warm-up session's and the probed one's
	cmd := exec.Command(bin, s.URL, "read notes.txt", strconv.Itoa(stackLimit))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stack probe: ok") {
		t.Fatalf("the turn did not fit in a %d-byte stack: %v\n%s", stackLimit, err, firstLines(out, 60))
	}
	if s.Len() != 4 {
		t.Errorf("the child sent %d requests, want 4", s.Len())
	}
}

// firstLines returns at most n lines of b.
func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
