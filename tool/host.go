package tool

import (
	"context"
	"time"
)

// Host is what an application hosting a session (an editor speaking the
// Agent Client Protocol, say) offers the built-in tools in place of the
// local machine. Each field is optional: nil keeps the local one. It sits
// after authorisation: the permission checks, the path confinement, the
// read-before-edit state and the Bash sandbox decide a call exactly as
// they do without a Host, and only then does the tool reach the file or
// the command through the Host.
//
// The functions must be safe for concurrent use and must return promptly
// when ctx is done.
type Host struct {
	// ReadTextFile returns the current text of the file at path (the
	// physical path the permission check resolved, absolute and clean),
	// as UTF-8; an editor returns the text of an unsaved buffer. Read,
	// Edit and Write use it for text files once a stat on disk showed a
	// regular file there; images, PDFs and notebooks are still read from
	// disk. The bytes returned are the tool's from then on: the Host must
	// not keep them to change later.
	ReadTextFile func(ctx context.Context, path string) ([]byte, error)
	// WriteTextFile replaces the text of the file at path (as for
	// ReadTextFile), creating it when missing. Edit and Write use it in
	// place of writing the disk; missing parent directories are still
	// created on disk first.
	WriteTextFile func(ctx context.Context, path string, data []byte) error
	// Terminal runs a foreground Bash command that the sandbox leaves
	// unconfined (sandboxed commands and background commands run as
	// local processes). It must stop the command when ctx is done (the
	// call's timeout or its cancellation) and still return what the
	// command printed.
	Terminal func(ctx context.Context, req TerminalRequest) (TerminalResult, error)
}

// TerminalRequest is a command for [Host.Terminal].
type TerminalRequest struct {
	// CallID is the tool_use id of the Bash call.
	CallID string
	// Command is the command line as the model gave it.
	Command string
	// Shell is the shell to run it with, as Shell -c Command.
	Shell string
	// Dir is the working directory, absolute.
	Dir string
	// Env is the command's whole environment, in os.Environ form.
	Env []string
	// Timeout is the command's time limit; ctx ends when it is over.
	Timeout time.Duration
	// OutputLimit is the most bytes of output worth keeping; a host may
	// keep fewer and drop the start.
	OutputLimit int
}

// TerminalResult is how a command of [Host.Terminal] ended.
type TerminalResult struct {
	// Output is what the command printed, stdout and stderr together.
	Output string
	// Truncated reports that the start of the output was dropped.
	Truncated bool
	// ExitCode is the command's exit status; nil when it did not exit
	// normally (Signal says why, or it was stopped).
	ExitCode *int
	// Signal names the signal that ended the command, if one did.
	Signal string
}
