// Command fakeserver serves a scripted Messages API on loopback for the
// benchmark scripts: every run gets -turns Bash tool calls (echo), then a
// text answer. It writes its address to -addr-file and serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strings"

	"github.com/agentloop/agentloop/agentlooptest"
)

func main() {
	turns := flag.Int("turns", 0, "tool turns before the answer")
	addrFile := flag.String("addr-file", "", "file to write host:port to")
	flag.Parse()
	srv := agentlooptest.NewServer()
	defer srv.Close()
	// Each run starts with a request whose history holds only the prompt;
	// answer by how many tool results the history carries.
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		done := (len(r.Params.Messages) - 1) / 2
		if done < *turns {
			return agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", done), "Bash", map[string]any{"command": "echo hi"}), true
		}
		return agentlooptest.Text("done"), true
	})
	host := strings.TrimPrefix(srv.URL, "http://")
	if _, _, err := net.SplitHostPort(host); err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(host), 0o644); err != nil {
			log.Fatal(err)
		}
	} else {
		fmt.Println(host)
	}
	select {}
}
