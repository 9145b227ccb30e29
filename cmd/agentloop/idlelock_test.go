package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// cliProcess is the command run as a process of its own, in stream-json
// mode, with its stdout read line by line.
type cliProcess struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startProcess runs the command as a process in dir with home and args.
func startProcess(t *testing.T, srv *agentlooptest.Server, dir, home string, args ...string) *cliProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "HOME="+home, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-test")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &cliProcess{t: t, cmd: cmd, in: in, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// until reads lines until one holds every sub.
func (p *cliProcess) until(subs ...string) string {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout ended before a line with %q", subs)
			}
			if containsAll(l, subs) {
				return l
			}
		case <-timeout:
			p.t.Fatalf("no line with %q in time", subs)
		}
	}
}

// TestResumeSessionOfIdleProcess: a session whose process is alive but
// idle (a stream-json host waiting for its next prompt) resumes in
// another process, which sees its history; while that process is in the
// middle of a turn, a resume is refused as busy and writes nothing. The
// holder's next turns run, continue its own history, and the first is
// told that the transcript branched.
func TestResumeSessionOfIdleProcess(t *testing.T) {
	slow := agentlooptest.Text("A slow.") // A, mid-turn while C tries
	slow.Delay = 5 * time.Second
	srv := agentlooptest.NewTB(t, agentlooptest.Text("A one."), agentlooptest.Text("B one."), slow, agentlooptest.Text("A three."))
	dir, home := t.TempDir(), t.TempDir()
	a := startProcess(t, srv, dir, home, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	io.WriteString(a.in, initLine("i1", "")+"\n")
	a.until(`"request_id":"i1"`)
	io.WriteString(a.in, userLine("HELLO-FROM-A")+"\n")
	res := a.until(`"type":"result"`)
	var r struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(res), &r); err != nil || r.SessionID == "" {
		t.Fatalf("result %q: %v", res, err)
	}

	// A is idle: B resumes the session and sees A's turn.
	b := exec.Command(os.Args[0], "-p", "HELLO-FROM-B", "--resume", r.SessionID, "--output-format", "json")
	b.Dir = dir
	b.Env = append(os.Environ(), runMainEnv+"=1", "HOME="+home, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-test")
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("resuming the idle session: %v\n%s", err, out)
	}
	if body := string(srv.LastRequest().Body); !strings.Contains(body, "HELLO-FROM-A") || !strings.Contains(body, "HELLO-FROM-B") {
		t.Errorf("B's request lacks the history: %.500s", body)
	}

	// A is mid-turn (its request is at the server, answered in 5s): a
	// resume is refused and the transcript is left as it is.
	// A's run starts by telling that the session was written meanwhile.
	io.WriteString(a.in, userLine("SLOW-FROM-A")+"\n")
	a.until("written by another process")
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Requests()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", r.SessionID+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts %v", files)
	}
	before, _ := os.ReadFile(files[0])
	c := exec.Command(os.Args[0], "-p", "HELLO-FROM-C", "--resume", r.SessionID, "--output-format", "json")
	c.Dir = dir
	c.Env = b.Env
	out, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "busy") {
		t.Errorf("resuming a session in the middle of a turn: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(files[0]); string(after) != string(before) {
		t.Error("the refused resume changed the transcript")
	}
	a.until(`"type":"result"`)

	// A's next turn runs, with A's own history.
	io.WriteString(a.in, userLine("AGAIN-FROM-A")+"\n")
	a.until(`"type":"result"`, `"is_error":false`)
	if body := string(srv.LastRequest().Body); !strings.Contains(body, "SLOW-FROM-A") || strings.Contains(body, "HELLO-FROM-B") {
		t.Errorf("A's request after B: %.500s", body)
	}
}
