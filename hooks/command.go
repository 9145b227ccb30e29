package hooks

// Command hooks: running the command and reading what it printed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/procguard"
)

// waitDelay bounds how long a finished or killed command's output pipes
// are drained (a background process it left behind may hold them open).
const waitDelay = time.Second

func (d *Dispatcher) runCommand(ctx context.Context, r *run, stdin []byte) Notice {
	hctx, cancel := r.context(ctx)
	defer cancel()
	cmd := exec.CommandContext(hctx, "bash", "-c", r.h.command)
	cmd.Dir = d.cfg.Cwd
	env := d.cfg.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), "CLAUDE_PROJECT_DIR="+d.cfg.ProjectDir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	both := &lockedBuffer{}
	cmd.Stdout = teeWriter{&stdout, both}
	cmd.Stderr = teeWriter{&stderr, both}
	cmd.WaitDelay = waitDelay
	isolate(cmd)
	// procguard.Start: the hook cannot read agentloop's credentials out
	// of agentloop's /proc entries or memory.
	var err error
	if d.cfg.Start != nil {
		err = d.cfg.Start(cmd, r.h.origin)
	} else {
		err = procguard.Start(cmd)
	}
	if err == nil {
		err = cmd.Wait()
	}
	n := Notice{Output: both.String(), Stdout: stdout.String(), Stderr: stderr.String(),
		ExitCode: exitCode(cmd.ProcessState)}
	if err != nil && r.ended(ctx, hctx) {
		n.Outcome = Cancelled
		return n
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		r.failure = fmt.Sprintf("%s: %v", r.label(), err)
		n.Stderr, n.Outcome = err.Error(), Failed
		return n
	}
	switch n.ExitCode {
	case 0:
		readStdout(r, &n, "stdout")
	case 2:
		r.blocked, r.stderr = true, n.Stderr
		n.Outcome = Failed
	default:
		msg := strings.TrimSpace(n.Stderr)
		if msg == "" {
			msg = "no stderr output"
		}
		r.failure = fmt.Sprintf("%s: exit status %d: %s", r.label(), n.ExitCode, msg)
		n.Outcome = Failed
	}
	return n
}

// readStdout reads what a command hook that exited 0 printed, or the body
// of an http hook's 2xx answer: a JSON object is the hook's Output, other
// text is plain output.
func readStdout(r *run, n *Notice, what string) {
	n.Outcome = Success
	text := strings.TrimSpace(n.Stdout)
	if !strings.HasPrefix(text, "{") {
		r.plain = n.Stdout
		return
	}
	if err := json.Unmarshal([]byte(text), &r.out); err != nil {
		r.failure = fmt.Sprintf("%s: hook output is not valid JSON (%v); %s began %q",
			r.label(), err, what, clip(text, 200))
		n.Outcome = Failed
		return
	}
	r.hasOut = true
}

// lockedBuffer collects stdout and stderr in the order they are written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type teeWriter struct {
	own  *bytes.Buffer
	both *lockedBuffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.own.Write(p)
	return t.both.Write(p)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// capText applies MaxOutputChars to a text for the model or the user.
func (d *Dispatcher) capText(s string) string {
	if utf8.RuneCountInString(s) <= MaxOutputChars {
		return s
	}
	total := utf8.RuneCountInString(s)
	count, cut := 0, len(s)
	for i := range s {
		if count == previewChars {
			cut = i
			break
		}
		count++
	}
	preview := s[:cut]
	note := fmt.Sprintf("\n\n[hook output truncated: %d characters in all", total)
	_ = os.MkdirAll(d.cfg.OverflowDir, 0o700) // a failure shows as CreateTemp's
	f, err := os.CreateTemp(d.cfg.OverflowDir, "agentloop-hook-output-*.txt")
	if err == nil {
		_, werr := f.WriteString(s)
		if cerr := f.Close(); werr == nil && cerr == nil {
			note += "; the full text is in " + filepath.ToSlash(f.Name())
		}
	}
	return preview + note + "]"
}
