// Command stdio serves the test server over stdin and stdout. With
// TESTSERVER_MODE=exit it exits at once (a server that fails to start);
// with TESTSERVER_MODE=hang it never answers (a server that times out).
// TESTSERVER_PIDFILE, when set, receives the process id.
package main

import (
	"context"
	"log"
	"os"
	"strconv"

	"github.com/agentloop/agentloop/mcp/internal/testserver"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if f := os.Getenv("TESTSERVER_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	switch os.Getenv("TESTSERVER_MODE") {
	case "exit":
		os.Exit(3)
	case "hang":
		select {}
	}
	name := os.Getenv("TESTSERVER_NAME")
	if name == "" {
		name = "test"
	}
	srv := testserver.New(name, testserver.Hooks{Crash: func() { os.Exit(4) }})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
