// Command server is the scale benchmark's model: the scripted Messages API
// of package agentlooptest in a process of its own, so that its CPU and
// memory are not counted as the agent's. Every session gets -turns tool
// calls (Read, Grep, Bash echo in turn, on the fixture tree at -fixture),
// then a text answer; which step a request is at is read from the number of
// tool results in its history. Each reply waits -latency before it starts
// streaming. The server prints its base URL on stdout (and writes it to
// -addr-file if given) and serves until SIGINT or SIGTERM. With -h2c it
// also serves HTTP/2 without TLS to clients that open with its preface.
//
// The server keeps every request it receives (agentlooptest records them
// for tests), so its memory grows with sessions × turns; it is meant to be
// started afresh for each run.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run() error {
	latency := flag.Duration("latency", 0, "delay before each reply starts streaming")
	turns := flag.Int("turns", 5, "tool calls per session before the text answer")
	fixture := flag.String("fixture", "", "absolute path of the fixture tree the tool calls name (required)")
	addrFile := flag.String("addr-file", "", "file to write the base URL to, besides stdout")
	h2c := flag.Bool("h2c", false, "also serve HTTP/2 without TLS (h2c, prior knowledge), so that clients that speak it multiplex their requests on few connections")
	compatFlag := flag.Bool("reference-compat", false, "serve through a proxy that drops what agentlooptest cannot decode from the reference CLI's requests (context_management, system-role messages)")
	msgCache := flag.Int("message-cache-mib", 512, "the scripted API's cache of decoded messages, in MiB (agentlooptest.ServerOptions.MessageCacheBytes)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	workload := flag.String("workload", script.WorkloadMixed, "the tool calls: mixed (Read, Grep, Bash in turn) or read (Read only)")
	tlsCert := flag.String("tls-cert", "", "serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate and -tls-key")
	tlsKey := flag.String("tls-key", "", "the PEM key of -tls-cert")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if *fixture == "" {
		return fmt.Errorf("-fixture is required")
	}
	if *workload != script.WorkloadMixed && *workload != script.WorkloadRead {
		return fmt.Errorf("-workload %q: want mixed or read", *workload)
	}
	var tlsConfig *tls.Config
	if *tlsCert != "" || *tlsKey != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return fmt.Errorf("-tls-cert, -tls-key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	// The message cache holds the histories of every session in flight (10,000
	// sessions: 100-180 MB of messages); the default 64 MiB is for tests.
	srv, err := agentlooptest.StartWith(&agentlooptest.ServerOptions{H2C: *h2c, TLS: tlsConfig, MessageCacheBytes: *msgCache << 20})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer srv.Close()
	srv.SetRouter(router(*workload, *fixture, *turns, *latency))
	// A run of 10,000 sessions makes 60,000 requests: count them, do not
	// keep them.
	srv.DiscardRequests()
	addr := srv.URL
	if *compatFlag {
		if addr, err = compatProxy(srv.URL); err != nil {
			return err
		}
	}
	fmt.Println(addr)
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(addr+"\n"), 0o644); err != nil {
			return fmt.Errorf("write address: %w", err)
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}

// router answers every messages request from the script: the next tool call
// while the session has done fewer than turns, then the text answer. Helper
// calls (requests that are not agent-loop turns) get a short text.
func router(workload, fixture string, turns int, latency time.Duration) func(*agentlooptest.Request) (agentlooptest.Reply, bool) {
	return func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		done := script.ToolResults(len(r.Params.Messages))
		var rep agentlooptest.Reply
		switch {
		case !r.IsMain(): // a helper call (title, summary): not part of the script
			rep = agentlooptest.Text("ok")
		case done < turns:
			call := script.StepFor(workload, fixture, done)
			rep = agentlooptest.ToolUse(fmt.Sprintf("toolu_%04d", done), call.Name, call.Input)
		default:
			rep = agentlooptest.Text(script.Answer)
		}
		rep.Delay = latency
		return rep, true
	}
}
