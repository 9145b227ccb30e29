package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentloop/agentloop/tool"
	sdk "github.com/coder/acp-go-sdk"
)

// editorStopTimeout bounds the requests that stop and release a terminal
// once the command's context is done, so that an editor that does not
// answer them cannot hold a cancelled prompt.
const editorStopTimeout = 10 * time.Second

// toolHost returns the tool.Host of a session for the capabilities the
// editor advertised in initialize: its fs/read_text_file and
// fs/write_text_file for the file tools' text files, its terminal for
// Bash. What the editor does not offer comes from base (the host of the
// base options), nil meaning the local machine; the result is nil when
// neither offers anything.
func (s *session) toolHost(caps sdk.ClientCapabilities, base *tool.Host) *tool.Host {
	h := tool.Host{}
	if base != nil {
		h = *base
	}
	if caps.Fs.ReadTextFile {
		h.ReadTextFile = s.readTextFile
		s.editorReads = true
	}
	if caps.Fs.WriteTextFile {
		h.WriteTextFile = s.writeTextFile
	}
	if caps.Terminal {
		h.Terminal = s.runInTerminal
	}
	if h.ReadTextFile == nil && h.WriteTextFile == nil && h.Terminal == nil {
		return nil
	}
	return &h
}

// fileReader returns how the session reads a file's current text for a
// diff: through the editor when it offers fs/read_text_file (an unsaved
// buffer), else nil (from disk).
func (s *session) fileReader(ctx context.Context) func(string) ([]byte, error) {
	if !s.editorReads {
		return nil
	}
	return func(p string) ([]byte, error) { return s.readTextFile(ctx, p) }
}

// readTextFile reads a file through the editor (fs/read_text_file): the
// text of its buffer, saved or not.
func (s *session) readTextFile(ctx context.Context, path string) ([]byte, error) {
	resp, err := s.agent.peer.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(s.id), Path: path})
	if err != nil {
		return nil, fmt.Errorf("fs/read_text_file %s: %w", path, err)
	}
	return []byte(resp.Content), nil
}

// writeTextFile writes a file through the editor (fs/write_text_file).
func (s *session) writeTextFile(ctx context.Context, path string, data []byte) error {
	_, err := s.agent.peer.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(s.id), Path: path, Content: string(data)})
	if err != nil {
		return fmt.Errorf("fs/write_text_file %s: %w", path, err)
	}
	return nil
}

// runInTerminal runs a Bash command in a terminal of the editor:
// terminal/create, the terminal embedded in the call's content, then
// terminal/wait_for_exit; when ctx ends first (timeout or cancel),
// terminal/kill. A create in flight when ctx ends is awaited (at most
// editorStopTimeout) so that its terminal is killed and released too. The output comes from terminal/output, and the terminal
// is released in every case.
func (s *session) runInTerminal(ctx context.Context, req tool.TerminalRequest) (tool.TerminalResult, error) {
	p, sid := s.agent.peer, sdk.SessionId(s.id)
	create := sdk.CreateTerminalRequest{SessionId: sid, Command: req.Shell, Args: []string{"-c", req.Command},
		Env: envChanges(req.Env, os.Environ())}
	if req.Dir != "" {
		create.Cwd = sdk.Ptr(req.Dir)
	}
	if req.OutputLimit > 0 {
		create.OutputByteLimit = sdk.Ptr(req.OutputLimit)
	}
	// The create is awaited even when ctx ends meanwhile: an editor that
	// made the terminal names it only in its answer, and a terminal left
	// unnamed could be neither killed nor released.
	if err := ctx.Err(); err != nil {
		return tool.TerminalResult{}, fmt.Errorf("terminal/create: %w", context.Cause(ctx))
	}
	made, cancelMade := context.WithTimeout(context.WithoutCancel(ctx), editorStopTimeout)
	created, err := p.CreateTerminal(made, create)
	cancelMade()
	if err != nil {
		return tool.TerminalResult{}, fmt.Errorf("terminal/create: %w", err)
	}
	term := created.TerminalId
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), editorStopTimeout)
	defer cancel()
	defer func() {
		if _, err := p.ReleaseTerminal(stop, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: term}); err != nil {
			s.agent.log.Warn("releasing a terminal", "session", s.id, "terminal", term, "error", err)
		}
	}()
	s.showTerminal(ctx, req, term)

	var res tool.TerminalResult
	exit, werr := p.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: term})
	if werr != nil || ctx.Err() != nil {
		if _, err := p.KillTerminal(stop, sdk.KillTerminalRequest{SessionId: sid, TerminalId: term}); err != nil {
			s.agent.log.Warn("killing a terminal", "session", s.id, "terminal", term, "error", err)
		}
	} else {
		res.ExitCode = exit.ExitCode
		if exit.Signal != nil {
			res.Signal = *exit.Signal
		}
	}
	out, oerr := p.TerminalOutput(stop, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: term})
	if oerr == nil {
		res.Output, res.Truncated = out.Output, out.Truncated
	}
	switch {
	case ctx.Err() != nil:
		return res, nil // the tool reports the timeout or the cancellation
	case werr != nil:
		return res, fmt.Errorf("terminal/wait_for_exit: %w", werr)
	case oerr != nil:
		return res, fmt.Errorf("terminal/output: %w", oerr)
	}
	return res, nil
}

// showTerminal embeds a call's terminal in its content, so that the
// editor shows the command running; the call keeps it when it ends.
func (s *session) showTerminal(ctx context.Context, req tool.TerminalRequest, term string) {
	if req.CallID == "" {
		return
	}
	input, _ := json.Marshal(map[string]string{"command": req.Command})
	s.startTool(ctx, req.CallID, "Bash", input) // when the call was not announced yet
	s.mu.Lock()
	s.terminals[req.CallID] = term
	s.mu.Unlock()
	s.update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(req.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(term)})))
}

// envChanges returns what a terminal, which starts from the editor's
// environment (taken to be the agent's own, base), needs to get env: the
// variables env sets to another value than base, and the variables of
// base that env leaves out (the API credentials agentloop keeps from
// commands) set to empty, since ACP cannot unset one.
func envChanges(env, base []string) []sdk.EnvVariable {
	have := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			have[k] = v
		}
	}
	// As for a process, the last of several values of a name counts.
	var names []string
	want := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, dup := want[k]; !dup {
			names = append(names, k)
		}
		want[k] = v
	}
	out := []sdk.EnvVariable{}
	seen := map[string]bool{}
	for _, k := range names {
		seen[k] = true
		if old, ok := have[k]; !ok || old != want[k] {
			out = append(out, sdk.EnvVariable{Name: k, Value: want[k]})
		}
	}
	for _, kv := range base {
		if k, _, ok := strings.Cut(kv, "="); ok && !seen[k] {
			seen[k] = true
			out = append(out, sdk.EnvVariable{Name: k, Value: ""})
		}
	}
	return out
}
