package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/tool"
)

//go:embed bash.md
var bashDescription string

// Limits of the Bash tool, in the reference's units and values.
const (
	bashDefaultTimeout  = 120 * time.Second // BASH_DEFAULT_TIMEOUT_MS
	bashMaxTimeout      = 600 * time.Second // BASH_MAX_TIMEOUT_MS
	bashDefaultLifetime = 30 * time.Minute  // background commands
	bashMaxLifetime     = 2 * time.Hour
)

// Grace periods when stopping a command.
const (
	// bashKillGrace is how long a command has to exit after SIGTERM
	// before its process group gets SIGKILL.
	bashKillGrace = 500 * time.Millisecond
	// bashPipeGrace is how long output is still read after the shell has
	// exited, for processes it left running that hold its stdout or
	// stderr open (such as `sleep 100 &`).
	bashPipeGrace = 250 * time.Millisecond
)

// bashNoOutput is the content of a successful call that printed nothing.
const bashNoOutput = "(Bash completed with no output)"

const bashSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "command": {
      "description": "The shell command to run",
      "type": "string"
    },
    "timeout": {
      "description": "How long the command may run, in milliseconds (up to 600000)",
      "type": "number"
    },
    "description": {
      "description": "A short, plain description of what the command does, in active voice (about 5-10 words), shown to the user. For example: \"List files in the current directory\", \"Run the unit tests\", \"Install the project's dependencies\".",
      "type": "string"
    },
    "run_in_background": {
      "description": "Start the command in the background and return at once with an ID; its output is written to files you can read later, and TaskStop ends it",
      "type": "boolean"
    },
    "dangerouslyDisableSandbox": {
      "description": "Ask to run this command outside the sandbox. Honoured only where the sandbox settings allow unsandboxed commands; the call then needs the usual permission, so prefer the sandbox and use this only after a command failed because of it",
      "type": "boolean"
    }
  },
  "required": ["command"],
  "additionalProperties": false
}`

type bashInput struct {
	Command                   string  `json:"command"`
	Timeout                   float64 `json:"timeout,omitempty"`
	Description               string  `json:"description,omitempty"`
	RunInBackground           bool    `json:"run_in_background,omitempty"`
	DangerouslyDisableSandbox bool    `json:"dangerouslyDisableSandbox,omitempty"`
}

// BashResult is the structured result (tool_use_result) of a Bash call that
// ran to completion, timed out, was interrupted or went to the background.
// A command that exits with an error status reports the string
// "Error: <what the model sees>" instead, as the reference does.
type BashResult struct {
	// Stdout and Stderr are the streams as the model sees them: leading
	// blank lines and trailing whitespace removed, capped in length.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Interrupted reports that the command was stopped before it ended,
	// by its timeout or by cancellation.
	Interrupted bool `json:"interrupted"`
	// IsImage and NoOutputExpected are always false; they are kept for the
	// shape of the reference's result.
	IsImage          bool `json:"isImage"`
	NoOutputExpected bool `json:"noOutputExpected"`
	// ReturnCodeInterpretation explains a non-zero exit status that is not
	// a failure, such as grep's 1 for "no matches".
	ReturnCodeInterpretation string `json:"returnCodeInterpretation,omitempty"`
	// BackgroundTaskID is the ID of a command started in the background.
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
	// TimedOutAfterMs is the timeout, in milliseconds, that ended the
	// command.
	TimedOutAfterMs int64 `json:"timedOutAfterMs,omitempty"`
}

// Bash returns the Bash tool. Each call runs its command with `bash -c` in a
// new process group, in the session's working directory, with stdin from
// /dev/null. The command's timeout (default 2 minutes, at most 10) or the
// cancellation of the call's context stops the whole process group: SIGTERM,
// then SIGKILL after a short grace. Processes the command leaves running are
// not waited for beyond a short grace, and are not killed.
//
// With run_in_background the command is registered with the session's
// [Shells] (see [BackgroundShells]) and the call returns at once.
//
// When the session's tool.Host offers a Terminal (an editor's), a
// foreground command that the sandbox leaves unconfined runs there
// instead, with the same environment, timeout and cancellation; its
// output (stdout and stderr together) is reported as stdout. Sandboxed
// and background commands always run as local processes.
func Bash() tool.Tool {
	return tool.New("Bash", bashDescription, runBash, &tool.Options{
		Schema:            json.RawMessage(bashSchema),
		AlwaysReportError: true,
	})
}

func runBash(ctx context.Context, in bashInput, call *tool.Call) (tool.Result, error) {
	var env *tool.Env
	if call != nil {
		env = call.Env
	}
	shell, dir, failure := bashPrepare(env)
	if failure != "" {
		return tool.Error(failure), nil
	}
	policy, err := bashSandbox(ctx, env, in)
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot run the command: %v", err)), nil
	}
	if in.RunInBackground {
		id := ""
		if call != nil {
			id = call.ID
		}
		return bashStartBackground(ctx, env, shell, dir, id, in, policy)
	}
	timeout := bashClamp(in.Timeout, bashDefaultTimeout, bashMaxTimeout)
	limit := bashMaxOutputChars
	if env != nil && env.ResultsDir != "" {
		limit = bashSpillChars // the loop saves what is over its limit to a file
	}
	if h := hostOf(env); policy == nil && h != nil && h.Terminal != nil {
		// Only a command the sandbox leaves unconfined runs in the host's
		// terminal, which no kernel sandbox confines.
		id := ""
		if call != nil {
			id = call.ID
		}
		run := bashInTerminal(ctx, h.Terminal, bashEnviron(env), shell, dir, id, in.Command, timeout, limit)
		return run.result(in.Command), nil
	}
	run := bashRun(ctx, bashEnviron(env), shell, dir, in.Command, timeout, limit, policy)
	return run.result(in.Command), nil
}

// bashPrepare finds bash and the working directory, or says why it cannot.
func bashPrepare(env *tool.Env) (shell, dir, failure string) {
	shell, err := lookBash()
	if err != nil {
		return "", "", "Cannot run the command: bash was not found in PATH."
	}
	if env != nil {
		dir = env.Cwd
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", "", fmt.Sprintf("Cannot run the command: no working directory: %v", err)
		}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", "", fmt.Sprintf("Cannot run the command: the working directory %s does not exist.", dir)
	case err != nil:
		return "", "", fmt.Sprintf("Cannot run the command: %v", err)
	case !fi.IsDir():
		return "", "", fmt.Sprintf("Cannot run the command: the working directory %s is not a directory.", dir)
	}
	return shell, dir, ""
}

// bashPath caches where bash was found for the PATH it was found in, so
// that a command costs one stat, not one per directory of PATH.
var bashPath struct {
	sync.Mutex
	path, found string
}

// lookBash is exec.LookPath("bash"), cached for the current PATH: a
// cached answer is used only while PATH is unchanged and the file is
// still an executable regular file; otherwise bash is looked up again.
func lookBash() (string, error) {
	path := os.Getenv("PATH")
	bashPath.Lock()
	p, found := bashPath.path, bashPath.found
	bashPath.Unlock()
	if found != "" && p == path {
		if fi, err := os.Stat(found); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return found, nil
		}
	}
	found, err := exec.LookPath("bash")
	if err != nil {
		return "", err
	}
	bashPath.Lock()
	bashPath.path, bashPath.found = path, found
	bashPath.Unlock()
	return found, nil
}

// bashClamp turns a timeout in milliseconds into a duration: the default
// when unset or not positive, at most max.
func bashClamp(ms float64, def, max time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	if ms >= float64(max/time.Millisecond) {
		return max
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if d <= 0 {
		return time.Millisecond
	}
	return d
}

// bashCommand prepares `bash -c command` in dir, in its own process group,
// with the environment of this process, no interactive pagers, and git
// hardened against planted repositories (withGitHardening).
func bashCommand(environ []string, shell, dir, command string) *exec.Cmd {
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = dir
	if environ == nil {
		environ = os.Environ()
	}
	cmd.Env = withGitHardening(append(slices.Clip(environ), "PWD="+dir, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"))
	bashIsolate(cmd)
	return cmd
}

// bashEnviron is the environment the session gives commands; nil (the
// host process's) when there is no session.
func bashEnviron(env *tool.Env) []string {
	if env == nil {
		return nil
	}
	return env.Environ
}

// bashOutcome is how a foreground command ended.
type bashOutcome struct {
	stdout, stderr *bashCapture
	exitCode       int
	timeout        time.Duration // set when the timeout stopped the command
	cancelled      bool
	startErr       error
}

// bashRun runs command in the foreground until it exits, times out or ctx
// is done, and returns its captured output, limit characters of each
// stream at most. A non-nil policy confines it.
func bashRun(ctx context.Context, environ []string, shell, dir, command string, timeout time.Duration, limit int, policy *sandbox.Policy) bashOutcome {
	out := bashOutcome{
		stdout: newBashCapture(limit, bashLeadBlankLines),
		stderr: newBashCapture(limit, bashLeadSpace),
	}
	if ctx.Err() != nil {
		out.cancelled = true
		return out
	}
	cmd := bashCommand(environ, shell, dir, command)
	cmd.Stdout, cmd.Stderr = out.stdout, out.stderr
	cmd.WaitDelay = bashPipeGrace
	if err := bashStart(cmd, policy); err != nil {
		out.startErr = err
		return out
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the status is read from cmd.ProcessState
		close(done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		out.timeout = timeout
	case <-ctx.Done():
		out.cancelled = true
	}
	select {
	case <-done: // it ended on its own after all
		out.timeout, out.cancelled = 0, false
	default:
		if out.timeout > 0 || out.cancelled {
			bashStop(cmd.Process.Pid, done)
		}
	}
	<-done
	out.exitCode = bashExitCode(cmd.ProcessState)
	return out
}

// bashStop ends the process group led by pid: SIGTERM, then, once done is
// closed or the grace period is over, SIGKILL for anything that ignored it.
func bashStop(pid int, done <-chan struct{}) {
	bashSignalGroup(pid, false)
	t := time.NewTimer(bashKillGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	bashSignalGroup(pid, true)
}

// result is what the model and the host are told about the run.
func (o bashOutcome) result(command string) tool.Result {
	if o.startErr != nil {
		return tool.Error(fmt.Sprintf("Cannot run the command: %v", o.startErr))
	}
	stdout := o.stdout.text()
	stderr := o.stderr.text()
	structured := BashResult{Stdout: stdout, Stderr: stderr}
	// A failure shows the head and tail of its output (bash_capture.go).
	failOut, failErr := bashFailureStreams(o.stdout, o.stderr)
	switch {
	case o.timeout > 0:
		structured.Interrupted = true
		structured.TimedOutAfterMs = o.timeout.Milliseconds()
		text := bashJoin(failOut, failErr, fmt.Sprintf("Command timed out after %s and was stopped", o.timeout))
		return bashFailure(text, structured)
	case o.cancelled:
		structured.Interrupted = true
		text := bashJoin(failOut, failErr, "Command was aborted before completion")
		return bashFailure(text, structured)
	case o.exitCode != 0:
		if meaning, ok := bashExitMeaning(command, o.exitCode); ok {
			structured.ReturnCodeInterpretation = meaning
			break
		}
		text := bashJoin(fmt.Sprintf("Exit code %d", o.exitCode), failOut, failErr)
		return bashFailure(text, "Error: "+text)
	}
	text := bashJoin(stdout, stderr)
	if text == "" {
		text = bashNoOutput
	}
	r := tool.Text(text)
	r.Structured = structured
	return r
}

func bashFailure(text string, structured any) tool.Result {
	r := tool.Error(text)
	r.Structured = structured
	return r
}

// bashExitMeaning reports exit status 1 of commands that use it for an
// answer rather than a failure, judged by the last command of the line.
func bashExitMeaning(command string, code int) (string, bool) {
	if code != 1 {
		return "", false
	}
	words := bashLastCommand(command)
	if len(words) == 0 {
		return "", false
	}
	switch filepath.Base(words[0]) {
	case "grep", "rg", "egrep", "fgrep":
		return "No matches found", true
	case "find":
		return "Some directories were inaccessible", true
	case "diff":
		return "Files differ", true
	case "test", "[":
		return "Condition is false", true
	case "git":
		if len(words) > 1 && (words[1] == "diff" || words[1] == "grep") {
			return "git " + words[1] + " found differences or no matches", true
		}
	}
	return "", false
}

// bashLastCommand returns the words of the last simple command of a command
// line, after any variable assignments. It splits on unquoted |, ;, & and
// newlines and understands quotes well enough for that; anything it cannot
// follow yields nil.
func bashLastCommand(line string) []string {
	var (
		segment []string
		word    strings.Builder
		inWord  bool
		quote   byte
	)
	flush := func() {
		if inWord {
			segment = append(segment, word.String())
			word.Reset()
			inWord = false
		}
	}
	last := []string(nil)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == '&' && (i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>'):
			word.WriteByte(c) // a redirection: 2>&1, &>file
			inWord = true
		case c == '|' || c == ';' || c == '&' || c == '\n':
			flush()
			if len(segment) > 0 {
				last = segment
			}
			segment = nil
		case c == ' ' || c == '\t':
			flush()
		case c == '(' || c == ')' || c == '`' || c == '$' && i+1 < len(line) && line[i+1] == '(':
			return nil
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil
	}
	flush()
	if len(segment) > 0 {
		last = segment
	}
	for len(last) > 0 && bashIsAssignment(last[0]) {
		last = last[1:]
	}
	return last
}

func bashIsAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
