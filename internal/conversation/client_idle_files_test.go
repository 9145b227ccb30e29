package conversation_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
)

// openFDs returns the targets of the process's open file descriptors, or
// skips the test where /proc/self/fd is not there.
func openFDs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var out []string
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			out = append(out, target)
		}
	}
	return out
}

// filesUnder lists the files and directories under the roots.
func filesUnder(t *testing.T, roots ...string) []string {
	t.Helper()
	var out []string
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != root {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// An idle Client with the default options (transcripts on) holds no file
// descriptor and has created no file: the transcript and its lock come
// with the first write. Its first turn then writes a complete transcript,
// and once the turn is over the session holds nothing again.
func TestIdleClientHoldsNoFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	const n = 20
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello."))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg}
	home, _ := os.UserHomeDir()
	homeBefore := filesUnder(t, home)
	before := openFDs(t)
	clients := make([]*agentloop.Client, n)
	for i := range clients {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	after := openFDs(t)
	// Descriptors of this test's directories, and any growth with the
	// number of clients (the HTTP client dials nothing before a turn).
	for _, fd := range after {
		if strings.HasPrefix(fd, cfg) || strings.HasPrefix(fd, cwd) || strings.HasPrefix(fd, home) {
			t.Errorf("an idle client holds %s open", fd)
		}
	}
	if grew := len(after) - len(before); grew >= n {
		t.Errorf("%d idle clients opened %d descriptors (before: %v, after: %v)", n, grew, before, after)
	}
	if got := filesUnder(t, cfg, cwd); len(got) != 0 {
		t.Errorf("idle clients created %v", got)
	}
	if diff := cmp.Diff(homeBefore, filesUnder(t, home)); diff != "" {
		t.Errorf("idle clients changed the home directory (-before +after):\n%s", diff)
	}

	// The first turn writes the transcript, and releases it at its end.
	c := clients[0]
	if _, err := c.Query(context.Background(), "Hi").Result(); err != nil {
		t.Fatal(err)
	}
	p := session.Path(cfg, cwd, c.SessionID())
	tr, err := session.Load(p)
	if err != nil {
		t.Fatalf("after the first turn: %v", err)
	}
	if got := len(tr.Messages()); got != 2 {
		t.Errorf("the transcript holds %d messages, want the prompt and the reply", got)
	}
	for _, fd := range openFDs(t) {
		if strings.HasPrefix(fd, cfg) {
			t.Errorf("after its turn the client still holds %s open", fd)
		}
	}
	if _, err := os.Stat(p + ".lock"); !os.IsNotExist(err) {
		t.Errorf("after its turn the lock file is there (%v)", err)
	}
}

// The lock is held by runs, not by idle sessions: a second Client resumes
// a session whose first Client is idle; a run while another writer holds
// the session fails with ErrSessionBusy before any request, and the
// Client runs again once it is free; both Clients' turns are whole in the
// transcript.
func TestRunTakesTheLock(t *testing.T) {
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"))
	opts := agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{}}
	c1, err := agentloop.NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if _, err := c1.Query(context.Background(), "first").Result(); err != nil {
		t.Fatal(err)
	}
	resume := opts
	resume.Resume = c1.SessionID()
	c2, err := agentloop.NewClient(&resume)
	if err != nil {
		t.Fatalf("resuming a session whose Client is idle: %v", err)
	}
	defer c2.Close()

	p := session.Path(cfg, cwd, c1.SessionID())
	w, err := session.Open(p, session.Envelope{SessionID: c1.SessionID()})
	if err != nil {
		t.Fatal(err)
	}
	sent := len(srv.Requests())
	_, err = c1.Query(context.Background(), "while held").Result()
	if !errors.Is(err, agentloop.ErrSessionBusy) {
		t.Errorf("a run while another writer holds the session: %v, want ErrSessionBusy", err)
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("%d requests sent by the refused run", n-sent)
	}
	w.Close()

	if _, err := c1.Query(context.Background(), "second").Result(); err != nil {
		t.Fatalf("after the other writer closed: %v", err)
	}
	if _, err := c2.Query(context.Background(), "from the other client").Result(); err != nil {
		t.Fatal(err)
	}
	tr, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 0 || len(tr.Messages()) != 4 {
		t.Errorf("transcript: %d messages on the chain (want the last client's 2 turns), warnings %v", len(tr.Messages()), tr.Warnings)
	}
	var prompts []string
	for _, e := range tr.Entries {
		if e.Type == session.TypeUser {
			prompts = append(prompts, e.Message.Content[0].Text)
		}
	}
	if diff := cmp.Diff([]string{"first", "second", "from the other client"}, prompts); diff != "" {
		t.Errorf("prompts in the file (-want +got):\n%s", diff)
	}
}
