package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// The exit codes, as the reference CLI uses them.
const (
	exitOK      = 0 // the run ended in a successful result
	exitFailure = 1 // an error result, a start-up failure or a bad command line
)

// exitStatusText documents the exit codes (--help, README).
const exitStatusText = "0 success; 1 an error result, session writes lost (the transcript was not fully written), a failure to start, or a bad command line; " +
	"0 after SIGINT (it interrupts the run, which ends with its result), 143 terminated (SIGTERM)."

// startupFailure reports err, a failure after the command line was read
// but before the run began (bad settings, an unknown --resume id, no
// credentials, an option the library refuses, an unreadable prompt file),
// and returns the exit code. The message goes to stderr; json and
// stream-json also print an error result on stdout, as the reference does,
// so that a program reading them is told why there is nothing else. No
// system/init precedes it: the session never started.
func (c *config) startupFailure(err error, stdout, stderr io.Writer) int {
	text := c.describe(err)
	fmt.Fprintf(stderr, "agentloop: %s\n", strings.ReplaceAll(text, "\n", "\n  "))
	if c.outputFormat == "json" || c.outputFormat == "stream-json" {
		res := c.startupResult(strings.ReplaceAll(text, "\n", "; "))
		var v any = res
		if c.outputFormat == "json" && c.verbose {
			v = []agentloop.Message{res}
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "agentloop: writing output: %v\n", err)
		}
	}
	return exitFailure
}

// startupResult is the error result of a run that never started: subtype
// error_during_execution, no turns, no cost, the reason in errors.
func (c *config) startupResult(text string) *agentloop.ResultMessage {
	id := c.sessionID
	if c.resume != "" {
		id = c.resume
	}
	if id == "" {
		id = uuid.NewString()
	}
	return &agentloop.ResultMessage{
		Subtype:           message.ResultErrorDuringExecution,
		IsError:           true,
		SessionID:         id,
		Usage:             message.ResultUsage{Iterations: []json.RawMessage{}},
		ModelUsage:        map[string]message.ModelUsage{},
		PermissionDenials: []message.PermissionDenial{},
		Errors:            []string{text},
		UUID:              uuid.NewString(),
	}
}

// describe is the user's version of a start-up error: without the
// prefixes the layers add on the way up ("agentloop: invalid option:
// settings: --settings: …" reads "--settings: …"), in the reference's
// words for an unknown session, and with a hint when the transcript
// cannot be written.
func (c *config) describe(err error) string {
	if errors.Is(err, agentloop.ErrSessionNotFound) && c.resume != "" {
		return "No conversation found with session ID: " + c.resume
	}
	msg := err.Error()
	for {
		trimmed := msg
		for _, p := range []string{"agentloop: ", "invalid option: ", "engine: "} {
			trimmed = strings.TrimPrefix(trimmed, p)
		}
		if trimmed == msg {
			break
		}
		msg = trimmed
	}
	msg = strings.Replace(msg, "settings: --settings: ", "--settings: ", 1)
	if c.settings != "" {
		msg = strings.Replace(msg, "settings: "+c.settings+": ", "--settings "+c.settings+": ", 1)
	}
	if hint := c.persistHint(err); hint != "" {
		msg += "; " + hint
	}
	return msg
}

// persistHint suggests --no-session-persistence when err is a failure to
// write under the config directory (a read-only home, say), where the
// transcript goes.
func (c *config) persistHint(err error) string {
	if c.noPersist {
		return ""
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || !(errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOTDIR)) {
		return ""
	}
	dir := sessions.DefaultConfigDir()
	if !within(pe.Path, dir) && !within(dir, pe.Path) {
		return ""
	}
	return "the session transcript cannot be written under " + dir + "; run with --no-session-persistence to go without one"
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkResume looks the --resume session up before anything that needs
// credentials or the network, so that an unknown id is reported as such
// (describe words it as the reference does) rather than as a missing API
// key. Other failures to look it up are left to the session, which
// reports them with more context.
func (c *config) checkResume() error {
	if c.resume == "" {
		return nil
	}
	if _, err := sessions.Find(sessions.DefaultConfigDir(), c.resume); errors.Is(err, sessions.ErrNotFound) {
		return fmt.Errorf("%w: %s", agentloop.ErrSessionNotFound, c.resume)
	}
	return nil
}
