package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestPipedInputJoinsPrompt: piped input is appended to a prompt argument
// (or --prompt-file) after a newline; alone it is the prompt; empty or
// blank input adds nothing.
func TestPipedInputJoinsPrompt(t *testing.T) {
	promptFile := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(promptFile, []byte("from the file"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"log and prompt", "line 1\nline 2\n", []string{"-p", "explain this"}, "explain this\nline 1\nline 2\n"},
		{"prompt after the flags", "data", []string{"--output-format", "json", "-p", "explain this"}, "explain this\ndata"},
		{"prompt file and input", "data\n", []string{"-p", "--prompt-file", promptFile}, "from the file\ndata\n"},
		{"empty input", "", []string{"-p", "explain this"}, "explain this"},
		{"blank input", " \n\n", []string{"-p", "explain this"}, "explain this"},
		{"input alone", "the question\n", []string{"-p"}, "the question\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			code, _, errOut := runCLI(t, srv, tc.stdin, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := srv.Requests()[0].LastUserText(); got != tc.want {
				t.Errorf("prompt sent %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStdinWait: with a prompt, input that has not started after
// stdinWait is given up with a warning; input that has started is read to
// its end however slow; without a prompt, stdin is waited for until a
// signal cancels the wait.
func TestStdinWait(t *testing.T) {
	withPrompt := &config{prompt: "explain this", hasPrompt: true}
	t.Run("open pipe nobody writes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			var warnings []string
			start := time.Now()
			got, err := readPrompt(t.Context(), withPrompt, r, func(s string) { warnings = append(warnings, s) })
			if err != nil || got != "explain this" {
				t.Errorf("prompt %q, %v", got, err)
			}
			if waited := time.Since(start); waited != stdinWait {
				t.Errorf("waited %v, want %v", waited, stdinWait)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "no input arrived on standard input within 3s") {
				t.Errorf("warnings %q", warnings)
			}
		})
	})
	t.Run("slow input", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			go func() {
				time.Sleep(stdinWait - time.Second)
				io.WriteString(w, "first ")
				time.Sleep(time.Minute) // long after the wait: input had started
				io.WriteString(w, "second")
				w.Close()
			}()
			got, err := readPrompt(t.Context(), withPrompt, r, func(s string) { t.Errorf("warning %q", s) })
			if err != nil || got != "explain this\nfirst second" {
				t.Errorf("prompt %q, %v", got, err)
			}
		})
	})
	t.Run("no prompt waits for a signal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			ctx, cancel := context.WithCancelCause(t.Context())
			go func() {
				time.Sleep(time.Hour)
				cancel(errInterrupted)
			}()
			start := time.Now()
			_, err := readPrompt(ctx, &config{}, r, func(s string) { t.Errorf("warning %q", s) })
			if !errors.Is(err, errInterrupted) || time.Since(start) != time.Hour {
				t.Errorf("after %v: %v, want the interrupt after an hour", time.Since(start), err)
			}
		})
	})
}

// TestOpenPipeDoesNotHang: the command given a prompt and an open pipe
// that nobody writes to goes on without the input after stdinWait, and
// says so on stderr.
func TestOpenPipeDoesNotHang(t *testing.T) {
	old := stdinWait
	stdinWait = 20 * time.Millisecond
	t.Cleanup(func() { stdinWait = old })
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Chdir(t.TempDir())
	r, w := io.Pipe()
	defer w.Close()
	var out, errOut strings.Builder
	code := run(t.Context(), []string{"-p", "explain this"}, r, &out, &errOut)
	if code != 0 || out.String() != "ok\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if want := "agentloop: warning: no input arrived on standard input within 20ms"; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("stderr %q, want it to start %q", errOut.String(), want)
	}
	if got := srv.Requests()[0].LastUserText(); got != "explain this" {
		t.Errorf("prompt sent %q", got)
	}
}
