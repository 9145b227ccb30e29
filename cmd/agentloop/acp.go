package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentloop/agentloop/acp"
)

// runACP runs `agentloop acp [flags]`: an Agent Client Protocol agent on
// stdin and stdout for editors. The flags are the command's usual ones
// (model, tools, permission mode, settings, MCP config...): they configure
// every session the editor opens. It returns when the editor closes stdin
// (0) or ctx ends (a signal).
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop acp: %v\n", strings.TrimPrefix(err.Error(), "usage: "))
		return exitFailure
	}
	if c.showHelp {
		fmt.Fprint(stdout, "Usage: agentloop acp [flags]\n\nServes the Agent Client Protocol on stdin/stdout; the flags of agentloop -p configure every session.\n")
		return exitOK
	}
	logger, closeLog, err := c.openLog(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop acp: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	for _, w := range c.warnings {
		fmt.Fprintf(stderr, "agentloop acp: warning: %s\n", w)
	}
	if err := c.checkBypassAsRoot(); err != nil {
		fmt.Fprintf(stderr, "agentloop acp: %v\n", err)
		return exitFailure
	}
	opts, err := c.options()
	if err != nil {
		fmt.Fprintf(stderr, "agentloop acp: %v\n", err)
		return exitFailure
	}
	opts.Logger = logger
	if err := acp.Serve(ctx, stdin, stdout, acp.Config{Options: opts, Logger: logger}); err != nil {
		fmt.Fprintf(stderr, "agentloop acp: %v\n", err)
		return exitFailure
	}
	return exitOK
}
