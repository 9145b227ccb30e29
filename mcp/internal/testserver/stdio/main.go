// Command stdio serves the test server over stdin and stdout. With
// TESTSERVER_MODE=exit it exits at once (a server that fails to start);
// with TESTSERVER_MODE=hang it never answers (a server that times out).
// TESTSERVER_PIDFILE, when set, receives the process id;
// TESTSERVER_CHILD_PIDFILE makes it start a long sleep and receives that
// child's process id.
package main

import (
	"context"
	"log"
	"os"
	"os/exec"
	"strconv"

	"github.com/agentloop/agentloop/mcp/internal/testserver"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if f := os.Getenv("TESTSERVER_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if f := os.Getenv("TESTSERVER_CHILD_PIDFILE"); f != "" {
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			log.Fatal(err)
		}
		_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
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
