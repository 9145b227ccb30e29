package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// The helper process: the test binary run again with helperEnv set runs
// TestHelperWriter, which opens a Writer on the session and does what
// helperMode says:
//
//	wait   print "locked", wait for a line on stdin, append rounds, close
//	retry  retry Open while the session is busy, then append rounds, close
//	hold   print "locked", then block until killed
//
// A round is a prompt and its reply (2 entries). When Open fails with
// ErrSessionBusy the helper prints "busy: <error>" and exits with 3.
const (
	helperEnv    = "AGENTLOOP_SESSION_HELPER_PATH"
	helperMode   = "AGENTLOOP_SESSION_HELPER_MODE"
	helperRounds = "AGENTLOOP_SESSION_HELPER_ROUNDS"
	helperTag    = "AGENTLOOP_SESSION_HELPER_TAG"
	exitBusy     = 3
)

func TestHelperWriter(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	rounds, _ := strconv.Atoi(os.Getenv(helperRounds))
	tag := os.Getenv(helperTag)
	env := Envelope{SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Cwd: "/w"}
	var w *Writer
	var err error
	for {
		w, err = Open(path, env)
		if !errors.Is(err, ErrSessionBusy) || os.Getenv(helperMode) != "retry" {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if errors.Is(err, ErrSessionBusy) {
		fmt.Printf("busy: %v\n", err)
		os.Exit(exitBusy)
	}
	if err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	switch os.Getenv(helperMode) {
	case "wait":
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
	case "hold":
		fmt.Println("locked")
		select {}
	}
	for i := range rounds {
		p := fmt.Sprintf("%s prompt %d", tag, i)
		if err := w.Append(PromptEntry("", p, "default")); err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(1)
		}
		time.Sleep(time.Millisecond)
		reply := AssistantEntry(&message.Assistant{Message: message.APIMessage{ID: fmt.Sprintf("msg_%s_%d", tag, i),
			Type: "message", Role: "assistant", Model: "claude-x", Content: []model.Content{model.TextBlock(tag + " reply")}}})
		if err := w.Append(reply); err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(1)
		}
	}
	if err := w.Close(); err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helper is a running helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startHelper(t *testing.T, path, mode, tag string, rounds int) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path, helperMode+"="+mode,
		helperRounds+"="+strconv.Itoa(rounds), helperTag+"="+tag)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	// A helper that hangs (waiting for a "go" that never comes, say) is
	// killed rather than hang the test.
	stop := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	t.Cleanup(func() { stop.Stop(); cmd.Process.Kill(); cmd.Wait() })
	return h
}

// line returns the helper's next line of output.
func (h *helper) line(t *testing.T) string {
	t.Helper()
	s, err := h.out.ReadString('\n')
	if err != nil && s == "" {
		t.Fatalf("helper output: %v", err)
	}
	return strings.TrimSpace(s)
}

// wait waits for the helper to exit and returns its exit code and the rest
// of its output.
func (h *helper) wait(t *testing.T) (int, string) {
	t.Helper()
	rest, _ := io.ReadAll(h.out)
	err := h.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(rest)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(rest)
}

// checkWhole loads the transcript and checks that every entry is on the
// chain from the final leaf, in rounds that are not interleaved.
func checkWhole(t *testing.T, path string, want int) *Transcript {
	t.Helper()
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != want || len(tr.Chain) != want || len(tr.Warnings) != 0 {
		t.Fatalf("%d entries, %d reachable from the leaf, warnings %q; want all %d reachable",
			len(tr.Entries), len(tr.Chain), tr.Warnings, want)
	}
	for i := 0; i+1 < len(tr.Chain); i += 2 {
		p, r := tr.Chain[i], tr.Chain[i+1]
		if p.Type != TypeUser || r.Type != TypeAssistant ||
			strings.Fields(p.Message.Content[0].Text)[0] != strings.Fields(r.Message.Content[0].Text)[0] {
			t.Fatalf("entries %d, %d: a prompt and another writer's reply: %q, %q", i, i+1,
				p.Message.Content[0].Text, r.Message.Content[0].Text)
		}
	}
	return tr
}

// Two processes resume one session: the second fails clearly with
// ErrSessionBusy while the first writes, and once the first has ended it
// can go on. No entry is lost: all 80 are on the chain from the leaf.
func TestSecondProcessIsBusy(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	const id = "33333333-3333-4333-8333-333333333333"
	path := filepath.Join(t.TempDir(), "projects", "-w", id+".jsonl")
	a := startHelper(t, path, "wait", "A", 20)
	if got := a.line(t); got != "locked" {
		t.Fatalf("first helper: %q", got)
	}
	b := startHelper(t, path, "wait", "B", 20)
	code, out := b.wait(t)
	if code != exitBusy || !strings.Contains(out, id) || !strings.Contains(out, "ForkSession") ||
		!strings.Contains(out, "process "+strconv.Itoa(a.cmd.Process.Pid)) {
		t.Fatalf("second helper exited %d: %q; want busy naming the session, its holder and ForkSession", code, out)
	}
	// In this process too.
	if w, err := Open(path, Envelope{SessionID: id}); !errors.Is(err, ErrSessionBusy) {
		if err == nil {
			w.Close()
		}
		t.Fatalf("Open while another process writes: %v, want ErrSessionBusy", err)
	}
	fmt.Fprintln(a.stdin, "go")
	if code, out := a.wait(t); code != 0 {
		t.Fatalf("first helper exited %d: %s", code, out)
	}
	b = startHelper(t, path, "wait", "B", 20)
	if got := b.line(t); got != "locked" {
		t.Fatalf("second helper after the first ended: %q", got)
	}
	fmt.Fprintln(b.stdin, "go")
	if code, out := b.wait(t); code != 0 {
		t.Fatalf("second helper exited %d: %s", code, out)
	}
	tr := checkWhole(t, path, 80)
	if got := tr.Chain[40].Message.Content[0].Text; got != "B prompt 0" {
		t.Errorf("entry 40 is %q, want B's first prompt after all of A's", got)
	}
	if _, err := os.Stat(lockPath(path)); !os.IsNotExist(err) {
		t.Errorf("lock file left after both closed: %v", err)
	}
}

// Three processes resume one session at once, each retrying while it is
// busy: they take turns, and every entry is on one chain.
func TestConcurrentWritersTakeTurns(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	path := filepath.Join(t.TempDir(), "44444444-4444-4444-8444-444444444444.jsonl")
	var hs []*helper
	for _, tag := range []string{"A", "B", "C"} {
		hs = append(hs, startHelper(t, path, "retry", tag, 15))
	}
	for i, h := range hs {
		if code, out := h.wait(t); code != 0 {
			t.Fatalf("helper %d exited %d: %s", i, code, out)
		}
	}
	checkWhole(t, path, 90)
}

// A writer that crashes releases the session: the next Open takes over its
// lock file and repairs the line it left cut short.
func TestCrashReleasesLock(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	path := filepath.Join(t.TempDir(), "55555555-5555-4555-8555-555555555555.jsonl")
	h := startHelper(t, path, "hold", "A", 0)
	if got := h.line(t); got != "locked" {
		t.Fatalf("helper: %q", got)
	}
	appendRaw(t, path, `{"type":"user","message":{"role":"user","content":"complete"},"uuid":"u1"}`+"\n"+`{"type":"assistant","mess`)
	h.cmd.Process.Kill()
	h.cmd.Wait()
	w, err := Open(path, Envelope{SessionID: "55555555-5555-4555-8555-555555555555"})
	if err != nil {
		t.Fatalf("Open after the holder crashed: %v", err)
	}
	defer w.Close()
	data, _ := os.ReadFile(path)
	if !bytes.HasSuffix(data, []byte(`"uuid":"u1"}`+"\n")) {
		t.Errorf("after Open by the new holder the file is %q, want the cut line removed", data)
	}
	if w.Leaf() != "u1" {
		t.Errorf("leaf %q, want u1", w.Leaf())
	}
}

// A file whose final line is half written while another process holds the
// session: reading it, trying to open it, renaming or tagging it never
// truncate that line.
func TestNoRepairWithoutLock(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	config := t.TempDir()
	const id = "66666666-6666-4666-8666-666666666666"
	path := Path(config, "/w", id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, path, `{"type":"user","message":{"role":"user","content":"hello"},"uuid":"u1"}`+"\n")
	h := startHelper(t, path, "hold", "A", 0)
	if got := h.line(t); got != "locked" {
		t.Fatalf("helper: %q", got)
	}
	half := `{"parentUuid":"u1","type":"assistant","message":{"role":"assis`
	appendRaw(t, path, half)
	before, _ := os.ReadFile(path)

	tr, err := Load(path)
	if err != nil || len(tr.Entries) != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], path+":2: skipped the final line") {
		t.Errorf("Load = %v, %+v", err, tr)
	}
	if _, err := Open(path, Envelope{SessionID: id}); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("Open = %v, want ErrSessionBusy", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("reading or opening changed the file:\n%q\nwant\n%q", after, before)
	}
	if err := Tag(config, id, "x"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.HasPrefix(after, before) {
		t.Fatalf("tagging a live session truncated its last line:\n%q", after)
	}
}

// Two Writers in one process on one session: the second is refused, with
// the file and the first Writer untouched; after Close the session is free.
func TestSecondWriterInProcess(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			w2, err := Open(path, Envelope{SessionID: "s"})
			if err == nil {
				w2.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, ErrSessionBusy) || !strings.Contains(err.Error(), "another Writer in this process") {
			t.Errorf("second Open = %v, want ErrSessionBusy", err)
		}
	}
	if err := w.Append(PromptEntry("", "hi", "default")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(path, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	w2.Close()
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
