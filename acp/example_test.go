package acp_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/acp"
)

// A Go program of your own that editors run as their ACP agent: the
// editor starts it and speaks JSON-RPC on its stdin and stdout, so
// diagnostics go to stderr. Every session the editor opens gets these
// options, with its own working directory, permission answers and MCP
// servers.
func ExampleServe() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := &agentloop.Options{
		Model:        "sonnet",
		AllowedTools: []string{"Read", "Grep", "Glob"},
	}
	if err := acp.Serve(ctx, os.Stdin, os.Stdout, acp.Config{Options: opts}); err != nil {
		log.Fatal(err)
	}
}
