package tools

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentloop/agentloop/tool"
)

// errBashTimeout is the cause of the context of a command run in the
// host's terminal when its timeout ends it.
var errBashTimeout = errors.New("the command timed out")

// bashTerminalNote starts the output of a command whose terminal dropped
// the start of what it printed.
const bashTerminalNote = "[the start of the output was dropped]\n"

// bashInTerminal runs a foreground command in the session's Host terminal
// (tool.Host.Terminal) instead of a local process, with the same
// environment, timeout and cancellation, and reports it as bashRun's
// outcome would be. The terminal gives stdout and stderr together: they
// are reported as stdout.
func bashInTerminal(ctx context.Context, term func(context.Context, tool.TerminalRequest) (tool.TerminalResult, error),
	environ []string, shell, dir, callID, command string, timeout time.Duration, limit int) bashOutcome {
	out := bashOutcome{
		stdout: newBashCapture(limit, bashLeadBlankLines),
		stderr: newBashCapture(limit, bashLeadSpace),
	}
	if ctx.Err() != nil {
		out.cancelled = true
		return out
	}
	env := bashCommand(environ, shell, dir, command).Env
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errBashTimeout)
	defer cancel()
	res, err := term(tctx, tool.TerminalRequest{CallID: callID, Command: command, Shell: shell, Dir: dir,
		Env: env, Timeout: timeout, OutputLimit: limit})
	text := res.Output
	if res.Truncated {
		text = bashTerminalNote + text
	}
	_, _ = out.stdout.Write([]byte(text)) // a capture never fails
	switch {
	case ctx.Err() != nil:
		out.cancelled = true
	case tctx.Err() != nil && errors.Is(context.Cause(tctx), errBashTimeout):
		out.timeout = timeout
	case err != nil:
		out.startErr = err
	case res.ExitCode != nil:
		out.exitCode = *res.ExitCode
	case res.Signal != "":
		out.exitCode = 128 + bashSignalNumber(res.Signal)
	default:
		out.startErr = errors.New("the terminal reported neither an exit status nor a signal")
	}
	return out
}

// bashSignalNumber is the number of a signal named as the host names it
// ("SIGKILL" or "KILL"), for the 128+N exit status a shell reports; 0
// for a name it does not know.
func bashSignalNumber(name string) int {
	switch strings.TrimPrefix(strings.ToUpper(name), "SIG") {
	case "HUP":
		return 1
	case "INT":
		return 2
	case "QUIT":
		return 3
	case "ILL":
		return 4
	case "ABRT":
		return 6
	case "FPE":
		return 8
	case "KILL":
		return 9
	case "SEGV":
		return 11
	case "PIPE":
		return 13
	case "ALRM":
		return 14
	case "TERM":
		return 15
	}
	return 0
}
