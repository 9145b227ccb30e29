// Command stackprobe is the child process of the root package's
// TestTurnFitsSmallStack: it runs two sessions against the scripted server
// at the URL it is given, the second on a goroutine of its own after every
// goroutine's stack is limited (runtime/debug.SetMaxStack), and prints
// "stack probe: ok" when both end well. Past the limit the runtime kills the
// process with the stack of the goroutine that needed more.
//
// The sessions write their transcripts, as by default. The first session
// does what a process does once: the tools' schemas
// compile, on the first session's goroutine, into a cache every later
// session shares.
//
// It is built without the race detector, whose instrumentation makes every
// frame larger: the limit is about the stack a program of users takes.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: stackprobe <server URL> <prompt> <stack limit in bytes>")
		os.Exit(2)
	}
	url, prompt := os.Args[1], os.Args[2]
	limit, err := strconv.Atoi(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "stackprobe: limit:", err)
		os.Exit(2)
	}
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: url, Getenv: func(string) string { return "" }})
	if err != nil {
		fmt.Println("stack probe:", err)
		os.Exit(2)
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Println("stack probe:", err)
		os.Exit(2)
	}
	// Transcripts on, as by default, in a directory of the run's own.
	opts := &agentloop.Options{Cwd: cwd, Provider: p, SettingSources: []settings.SettingSource{}, ConfigDir: filepath.Join(cwd, "config")}
	if err := session(opts, prompt); err != nil {
		fmt.Println("stack probe: warm-up:", err)
		os.Exit(2)
	}
	debug.SetMaxStack(limit)
	done := make(chan error)
	go func() { done <- session(opts, prompt) }()
	if err := <-done; err != nil {
		fmt.Println("stack probe:", err)
		os.Exit(2)
	}
	fmt.Println("stack probe: ok")
}

// session runs one session of two turns with opts.
func session(opts *agentloop.Options, prompt string) error {
	var res *agentloop.ResultMessage
	for m, err := range agentloop.Query(context.Background(), prompt, opts) {
		if err != nil {
			return err
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			res = r
		}
	}
	if res == nil || res.IsError || res.NumTurns != 2 {
		return fmt.Errorf("result %+v, want a success after two turns", res)
	}
	return nil
}
