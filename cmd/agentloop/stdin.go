package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// stdinWait is how long a prompt given on the command line waits for the
// first byte of piped input before going on without it, as the reference
// CLI does (it warns after 3 s). Once input has started it is read to its
// end however long that takes.
var stdinWait = 3 * time.Second

var errNoPrompt = errors.New(`no prompt: give one as an argument (agentloop -p "…") or on standard input`)

// readPrompt assembles the prompt from the argument or --prompt-file and
// standard input. Piped input alone is the prompt; with a prompt it is
// appended after a newline (cat log | agentloop -p "explain this" sends
// "explain this\n<log>"). A terminal, or input that is empty or only
// white space, adds nothing. warn reports a wait for input that was given
// up. ctx (a signal) ends any wait.
func readPrompt(ctx context.Context, c *config, stdin io.Reader, warn func(string)) (string, error) {
	var prompt string
	given := true
	switch {
	case c.hasPrompt:
		if strings.TrimSpace(c.prompt) == "" {
			return "", errors.New("the prompt is empty")
		}
		prompt = c.prompt
	case c.promptFile != "":
		b, err := os.ReadFile(c.promptFile)
		if err != nil {
			return "", fmt.Errorf("reading the prompt file: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", fmt.Errorf("the prompt file %s is empty", c.promptFile)
		}
		prompt = string(b)
	default:
		given = false
	}
	if stdin == nil || isTerminal(stdin) {
		if !given {
			return "", errNoPrompt
		}
		return prompt, nil
	}
	var wait time.Duration // with no prompt, stdin is all there is: wait for it
	if given {
		wait = stdinWait
	}
	piped, gaveUp, err := readStdin(ctx, stdin, wait)
	if err != nil {
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	if gaveUp {
		warn(fmt.Sprintf("no input arrived on standard input within %v; going on without it (redirect it from /dev/null to skip the wait)", wait))
	}
	switch {
	case strings.TrimSpace(piped) == "" && !given:
		return "", errNoPrompt
	case strings.TrimSpace(piped) == "":
		return prompt, nil
	case !given:
		return piped, nil
	}
	return prompt + "\n" + piped, nil
}

// isTerminal reports whether r is a terminal (or another character
// device, such as /dev/null), which is not read.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// readStdin reads r to its end. With wait > 0 it gives up if no byte has
// arrived by then and reports gaveUp; input that has started is read to
// its end. ctx ends the wait at any point, with its cause as the error.
// A reader given up on is left to a goroutine blocked in Read, which ends
// with the process (or when the writer closes its end).
func readStdin(ctx context.Context, r io.Reader, wait time.Duration) (data string, gaveUp bool, err error) {
	type result struct {
		data []byte
		err  error
	}
	started := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		var buf bytes.Buffer
		p := make([]byte, 32<<10)
		first := true
		for {
			n, err := r.Read(p)
			if first && (n > 0 || err != nil) {
				first = false
				close(started)
			}
			buf.Write(p[:n])
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				done <- result{buf.Bytes(), err}
				return
			}
		}
	}()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-started:
	case <-timeout:
		return "", true, nil
	case <-ctx.Done():
		return "", false, context.Cause(ctx)
	}
	select {
	case res := <-done:
		return string(res.data), false, res.err
	case <-ctx.Done():
		return "", false, context.Cause(ctx)
	}
}
