package acp

import (
	"bytes"
	"context"
	"io"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// The session's slash commands ([agentloop.Client.SupportedCommands]:
// the built-in ones, the file commands and the skills) are sent to the
// editor as available_commands_update when a session opens: after the
// answer to session/new (the editor learns the session id from it), and
// before the answer to session/load and session/resume, as the replay's
// updates are. A prompt "/name args" runs the command.

// commands are the session's slash commands in ACP's terms.
func (s *session) commands() []sdk.AvailableCommand {
	out := []sdk.AvailableCommand{}
	for _, c := range s.client.SupportedCommands() {
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.ArgumentHint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		out = append(out, ac)
	}
	return out
}

// advertiseCommands sends the session's available_commands_update.
func (s *session) advertiseCommands(ctx context.Context) {
	s.update(ctx, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: s.commands()}})
}

// watchWriter is the connection's output: after it has written a line
// that holds every marker of a watch, it runs the watch's function (on a
// goroutine of its own). The connection writes each message in one
// Write, so a watch sees whole messages.
type watchWriter struct {
	w       io.Writer
	mu      sync.Mutex
	watches []watch
}

// watch is a function to run once a message with all of markers is out.
type watch struct {
	markers [][]byte
	fn      func()
}

// after runs fn once a message holding every marker has been written.
func (w *watchWriter) after(fn func(), markers ...[]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watches = append(w.watches, watch{markers: markers, fn: fn})
}

func (w *watchWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.mu.Lock()
	var due []func()
	kept := w.watches[:0]
	for _, x := range w.watches {
		all := true
		for _, m := range x.markers {
			all = all && bytes.Contains(p, m)
		}
		if all {
			due = append(due, x.fn)
		} else {
			kept = append(kept, x)
		}
	}
	w.watches = kept
	w.mu.Unlock()
	for _, fn := range due {
		go fn()
	}
	return n, err
}
