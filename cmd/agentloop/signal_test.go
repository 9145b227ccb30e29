package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
)

// stalled is a reply that never comes; arrived is closed when the
// request for it has arrived.
func stalled() (reply agentlooptest.Reply, arrived chan struct{}) {
	arrived = make(chan struct{})
	reply = agentlooptest.Text("too late")
	reply.Delay = time.Hour
	reply.Expect = func(*agentlooptest.Request) error { close(arrived); return nil }
	return reply, arrived
}

// awaitArrival waits for the request a stalled reply was made for.
func awaitArrival(t *testing.T, arrived <-chan struct{}) {
	t.Helper()
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the first request did not arrive")
	}
}

// TestSignalExitCodes: a signal during the run cancels it, whatever the
// output format, and the command exits 0 after SIGINT (the reference's:
// the run is interrupted) and 143 after SIGTERM; the first signal stops
// the handling so a second one would kill the process.
func TestSignalExitCodes(t *testing.T) {
	cases := []struct {
		name    string
		sig     os.Signal
		args    []string
		wantOut string
	}{
		{"SIGINT text", os.Interrupt, nil, "cancelled"},
		{"SIGINT json", os.Interrupt, []string{"--output-format", "json"}, `"subtype":"error_during_execution"`},
		{"SIGINT stream-json", os.Interrupt, []string{"--output-format", "stream-json", "--verbose"}, `"type":"result"`},
		{"SIGTERM text", syscall.SIGTERM, nil, "cancelled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reply, arrived := stalled()
			srv := agentlooptest.NewTB(t, reply)
			t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
			t.Setenv("ANTHROPIC_API_KEY", "sk-test")
			t.Chdir(t.TempDir())
			sigs := make(chan os.Signal, 1)
			go func() {
				<-arrived
				sigs <- tc.sig
			}()
			stopped := false
			var out, errOut bytes.Buffer
			code := runSignalled(sigs, func() { stopped = true }, append([]string{"-p", "wait"}, tc.args...),
				strings.NewReader(""), &out, &errOut)
			want := 128 + int(tc.sig.(syscall.Signal))
			if tc.sig == os.Interrupt {
				want = 0
			}
			if code != want || !stopped {
				t.Errorf("exit %d (signal handling stopped: %v), want %d; stderr %q", code, stopped, want, errOut.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout %q, want %q in it", out.String(), tc.wantOut)
			}
		})
	}
	t.Run("while waiting for standard input", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		sigs := make(chan os.Signal, 1)
		sigs <- os.Interrupt
		var out, errOut bytes.Buffer
		if code := runSignalled(sigs, func() {}, []string{"-p"}, r, &out, &errOut); code != 0 {
			t.Errorf("exit %d, want 0; stderr %q", code, errOut.String())
		}
	})
	t.Run("no signal", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
		t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		t.Setenv("ANTHROPIC_API_KEY", "sk-test")
		t.Chdir(t.TempDir())
		var out, errOut bytes.Buffer
		if code := runSignalled(make(chan os.Signal), func() { t.Error("signal handling stopped") }, []string{"-p", "hi"},
			strings.NewReader(""), &out, &errOut); code != 0 || out.String() != "done\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
		}
	})
}

// TestSIGINTProcess: the command as a process, sent a real SIGINT while
// it waits for the model, exits 0 with the interrupted result, as the
// reference (testdata/interrupts/psigint).
func TestSIGINTProcess(t *testing.T) {
	reply, arrived := stalled()
	srv := agentlooptest.NewTB(t, reply)
	cmd := exec.Command(os.Args[0], "-p", "wait")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-test")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no request within 30s; stderr %q", errOut.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("wait: %v, want exit status 0; stdout %q stderr %q", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), engine.InterruptedMarker) && !strings.Contains(out.String(), "cancelled") {
		t.Errorf("stdout %q, want the interrupted run's output", out.String())
	}
}
