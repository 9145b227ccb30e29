// Command agentloop-temporal is `agentloop serve` with its sessions on
// Temporal: each replica is an HTTP front end (the same API and web page)
// and a worker of the sessions' workflows, so a turn goes on when the
// replica running it dies. `agentloop serve --temporal HOST:PORT` runs it.
//
//	agentloop-temporal serve --temporal 127.0.0.1:7233 [--temporal-namespace default]
//	    [--task-queue agentloop] [--worker=true] --root DIR --tokens-file FILE [serve flags]
//
// See docs/serve.md, "Durable sessions: leases or Temporal".
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentloop/agentloop/serve/servecmd"
	"github.com/agentloop/agentloop/temporal/internal/servetemporal"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: agentloop-temporal serve --temporal HOST:PORT [--temporal-namespace N] [--task-queue Q] [--worker=false] [agentloop serve flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code := servecmd.Run(ctx, os.Args[2:], os.Stdout, os.Stderr, servetemporal.Extension())
	stop()
	os.Exit(code)
}
