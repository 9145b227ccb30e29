package acp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/sandbox"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// richEditor is an editor that offers its file system (buffers in
// memory, falling back to the disk) and terminals (scripted: a command
// prints what script says, or runs until killed when hang is set).
type richEditor struct {
	*editor

	fmu       sync.Mutex
	buffers   map[string]string
	reads     []string
	writes    []sdk.WriteTextFileRequest
	creates   []sdk.CreateTerminalRequest
	killed    []string
	released  []string
	output    string
	exitCode  int
	hang      bool
	exits     map[string]chan struct{}
	createdCh chan string // when set, receives each new terminal's id
	// When holdCreate is set, terminal/create answers only once it is
	// closed; if the agent cancels the request first, the editor still
	// made the terminal and closes createDropped.
	holdCreate    chan struct{}
	createDropped chan struct{}
}

func newRichEditor() *richEditor {
	return &richEditor{editor: &editor{answer: "allow_once"}, buffers: map[string]string{}, exits: map[string]chan struct{}{}}
}

// everything is what richEditor advertises.
var everything = sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}

func (e *richEditor) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.fmu.Lock()
	defer e.fmu.Unlock()
	e.reads = append(e.reads, r.Path)
	if b, ok := e.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(r.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(data)}, nil
}

func (e *richEditor) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.fmu.Lock()
	defer e.fmu.Unlock()
	e.writes = append(e.writes, r)
	e.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, nil
}

func (e *richEditor) CreateTerminal(ctx context.Context, r sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	e.fmu.Lock()
	e.creates = append(e.creates, r)
	id := fmt.Sprintf("term-%d", len(e.creates))
	exited := make(chan struct{})
	if !e.hang {
		close(exited)
	}
	e.exits[id] = exited
	ch := e.createdCh
	e.fmu.Unlock()
	if ch != nil {
		ch <- id
	}
	if e.holdCreate != nil {
		select {
		case <-e.holdCreate:
		case <-ctx.Done():
			close(e.createDropped)
		}
	}
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (e *richEditor) WaitForTerminalExit(ctx context.Context, r sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	e.fmu.Lock()
	exited, code := e.exits[r.TerminalId], e.exitCode
	e.fmu.Unlock()
	select {
	case <-exited:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	e.fmu.Lock()
	defer e.fmu.Unlock()
	if slices.Contains(e.killed, r.TerminalId) {
		return sdk.WaitForTerminalExitResponse{Signal: sdk.Ptr("SIGKILL")}, nil
	}
	return sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(code)}, nil
}

func (e *richEditor) TerminalOutput(_ context.Context, r sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	e.fmu.Lock()
	defer e.fmu.Unlock()
	return sdk.TerminalOutputResponse{Output: e.output}, nil
}

func (e *richEditor) KillTerminal(_ context.Context, r sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	e.fmu.Lock()
	defer e.fmu.Unlock()
	e.killed = append(e.killed, r.TerminalId)
	select {
	case <-e.exits[r.TerminalId]:
	default:
		close(e.exits[r.TerminalId])
	}
	return sdk.KillTerminalResponse{}, nil
}

func (e *richEditor) ReleaseTerminal(_ context.Context, r sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	e.fmu.Lock()
	defer e.fmu.Unlock()
	e.released = append(e.released, r.TerminalId)
	return sdk.ReleaseTerminalResponse{}, nil
}

// noSandbox turns the Bash sandbox off: only unconfined commands run in
// the editor's terminal.
func noSandbox(o *agentloop.Options) { o.Sandbox = &agentloop.SandboxSettings{Enabled: false} }

// resultText is the text of the tool result for id that the model got.
func resultText(t *testing.T, srv *agentlooptest.Server, id string) string {
	t.Helper()
	for _, req := range srv.Requests() {
		if c, ok := req.ToolResult(id); ok {
			return c.ResultText()
		}
	}
	t.Fatalf("the model got no result for %s", id)
	return ""
}

// TestEditorFiles: with the editor's fs capabilities, Read shows the
// unsaved buffer and Edit and Write go to the editor, not the disk.
func TestEditorFiles(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, "a.txt")
	if err := os.WriteFile(path, []byte("saved text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	created := filepath.Join(cwd, "b.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": path}),
		agentlooptest.ToolUse("toolu_2", "Edit", map[string]any{"file_path": path, "old_string": "unsaved", "new_string": "edited"}),
		agentlooptest.ToolUse("toolu_3", "Write", map[string]any{"file_path": created, "content": "new file\n"}),
		agentlooptest.ToolUse("toolu_4", "Write", map[string]any{"file_path": path, "content": "rewritten\n"}),
		agentlooptest.Text("done"))
	ed := newRichEditor()
	ed.buffers[path] = "unsaved text\n"
	r := startWith(t, srv, t.TempDir(), cwd, ed.editor, ed, everything, nil)
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "edit it"); err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, srv, "toolu_1"); !strings.Contains(got, "1\tunsaved text") {
		t.Errorf("Read gave the model %q, want the unsaved buffer", got)
	}
	if got := resultText(t, srv, "toolu_2"); !strings.Contains(got, "updated successfully") {
		t.Errorf("Edit = %q", got)
	}
	want := []sdk.WriteTextFileRequest{
		{SessionId: s.SessionId, Path: path, Content: "edited text\n"},
		{SessionId: s.SessionId, Path: created, Content: "new file\n"},
		{SessionId: s.SessionId, Path: path, Content: "rewritten\n"},
	}
	if d := cmp.Diff(want, ed.writes); d != "" {
		t.Errorf("fs/write_text_file requests (-want +got):\n%s", d)
	}
	if data, _ := os.ReadFile(path); string(data) != "saved text\n" {
		t.Errorf("the file on disk became %q", data)
	}
	if _, err := os.Stat(created); err == nil {
		t.Error("Write created the file on disk")
	}
	// The second Write's diff starts from the editor's buffer.
	for _, u := range ed.take() {
		if c := u.ToolCall; c != nil && c.ToolCallId == "toolu_4" {
			if len(c.Content) != 1 || c.Content[0].Diff == nil || c.Content[0].Diff.OldText == nil || *c.Content[0].Diff.OldText != "edited text\n" {
				t.Errorf("the Write's content = %+v, want a diff from the buffer", c.Content)
			}
		}
	}
}

// TestEditorTerminal: with the editor's terminal, Bash runs there: the
// model gets the terminal's output, the call shows the terminal, and the
// terminal is released.
func TestEditorTerminal(t *testing.T) {
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo local"}),
		agentlooptest.Text("done"))
	ed := newRichEditor()
	ed.output = "printed in the editor's terminal\n"
	r := startWith(t, srv, t.TempDir(), cwd, ed.editor, ed, everything, noSandbox)
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "run it"); err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, srv, "toolu_1"); got != "printed in the editor's terminal" {
		t.Errorf("the model got %q", got)
	}
	if len(ed.creates) != 1 {
		t.Fatalf("terminal/create requests: %+v", ed.creates)
	}
	c := ed.creates[0]
	if !strings.HasSuffix(c.Command, "bash") || !cmp.Equal(c.Args, []string{"-c", "echo local"}) || c.Cwd == nil || *c.Cwd != cwd ||
		c.SessionId != s.SessionId {
		t.Errorf("terminal/create = %+v", c)
	}
	if !slices.ContainsFunc(c.Env, func(v sdk.EnvVariable) bool { return v.Name == "PAGER" && v.Value == "cat" }) {
		t.Errorf("the terminal's environment lacks PAGER=cat: %+v", c.Env)
	}
	if d := cmp.Diff([]string{"term-1"}, ed.released); d != "" {
		t.Errorf("released (-want +got):\n%s", d)
	}
	if len(ed.killed) != 0 {
		t.Errorf("a finished command was killed: %v", ed.killed)
	}
	// The call shows the terminal while it runs and after.
	var shown []string
	for _, u := range ed.take() {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "toolu_1" {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Terminal != nil {
					shown = append(shown, c.Terminal.TerminalId)
				}
			}
		}
	}
	if d := cmp.Diff([]string{"term-1", "term-1"}, shown); d != "" {
		t.Errorf("terminal content (-want +got):\n%s", d)
	}
}

// TestEditorDenied: a deny rule and a rejected permission keep calls
// from reaching the editor's file system and terminal.
func TestEditorDenied(t *testing.T) {
	cwd := t.TempDir()
	path, other := filepath.Join(cwd, "secret.txt"), filepath.Join(cwd, "other.txt")
	for p, text := range map[string]string{path: "secret\n", other: "other\n"} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": path}),
		agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "rm -rf stuff"}),
		agentlooptest.ToolUse("toolu_3", "Write", map[string]any{"file_path": other, "content": "gone\n"}),
		agentlooptest.Text("done"))
	ed := newRichEditor()
	ed.answer = "reject"
	r := startWith(t, srv, t.TempDir(), cwd, ed.editor, ed, everything, func(o *agentloop.Options) {
		noSandbox(o)
		o.DisallowedTools = []string{"Read(/" + path + ")", "Bash(rm:*)"} // "//" starts an absolute path
	})
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "try"); err != nil {
		t.Fatal(err)
	}
	// The rejected Write's diff shows the editor its own buffer of other
	// (a read for the editor, not the model); nothing else is reached.
	if slices.Contains(ed.reads, path) || len(ed.writes) != 0 || len(ed.creates) != 0 {
		t.Errorf("the editor was reached: reads %v, writes %v, terminals %v", ed.reads, ed.writes, ed.creates)
	}
	for id, want := range map[string]string{"toolu_1": "denied by the rule Read(/", "toolu_2": "denied by the rule Bash(rm:*)",
		"toolu_3": "The user rejected this tool call."} {
		if got := resultText(t, srv, id); !strings.Contains(got, want) {
			t.Errorf("%s gave the model %q, want %q in it", id, got, want)
		}
	}
	if data, _ := os.ReadFile(other); string(data) != "other\n" {
		t.Errorf("the rejected Write changed the file: %q", data)
	}
	if len(ed.asked) != 1 || ed.asked[0].ToolCall.ToolCallId != "toolu_3" {
		t.Errorf("asked about %d calls, want only the Write", len(ed.asked))
	}
}

// TestEditorTerminalCancel: session/cancel while a command runs in the
// editor's terminal, or while the terminal is being created, kills and
// releases the terminal, and the prompt ends cancelled.
func TestEditorTerminalCancel(t *testing.T) {
	for _, during := range []bool{false, true} {
		name := "while running"
		if during {
			name = "while being created"
		}
		t.Run(name, func(t *testing.T) { testEditorTerminalCancel(t, during) })
	}
}

func testEditorTerminalCancel(t *testing.T, duringCreate bool) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "sleep 600"}),
		agentlooptest.Text("after the cancel"))
	ed := newRichEditor()
	ed.hang = true
	ed.output = "started\n"
	ed.createdCh = make(chan string, 1)
	if duringCreate {
		ed.holdCreate, ed.createDropped = make(chan struct{}), make(chan struct{})
	}
	r := startWith(t, srv, t.TempDir(), t.TempDir(), ed.editor, ed, everything, noSandbox)
	s := r.newSession()
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := r.prompt(context.Background(), s.SessionId, "run it")
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	id := <-ed.createdCh
	if err := r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	if ed.holdCreate != nil {
		// The editor answers terminal/create only after the cancel; an
		// agent that gave up on the request never learns the id.
		select {
		case <-ed.createDropped:
		case <-time.After(time.Second):
		}
		close(ed.holdCreate)
	}
	select {
	case resp := <-done:
		if resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stop reason = %q", resp.StopReason)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not end after session/cancel")
	}
	// The kill may reach the editor just after the prompt's answer.
	var killed, released []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ed.fmu.Lock()
		killed, released = slices.Clone(ed.killed), slices.Clone(ed.released)
		ed.fmu.Unlock()
		if len(released) > 0 {
			break
		}
	}
	if d := cmp.Diff([]string{id}, killed); d != "" {
		t.Errorf("killed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{id}, released); d != "" {
		t.Errorf("released (-want +got):\n%s", d)
	}
}

// TestEditorWithoutCapabilities: an editor that offers nothing is never
// asked for files or terminals (the stubs of editor would fail the call).
func TestEditorWithoutCapabilities(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, "a.txt")
	if err := os.WriteFile(path, []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": path}),
		agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "echo from-local"}),
		agentlooptest.Text("done"))
	ed := newRichEditor()
	r := startWith(t, srv, t.TempDir(), cwd, ed.editor, ed, sdk.ClientCapabilities{}, nil)
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "go"); err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, srv, "toolu_1"); !strings.Contains(got, "on disk") {
		t.Errorf("Read = %q", got)
	}
	if got := resultText(t, srv, "toolu_2"); got != "from-local" {
		t.Errorf("Bash = %q", got)
	}
	if len(ed.reads)+len(ed.creates) != 0 {
		t.Errorf("the editor was asked: reads %v, terminals %v", ed.reads, ed.creates)
	}
}

// TestEditorTerminalNotSandboxed: a command the sandbox confines (the
// default sandbox) runs as a local sandboxed process, not in the editor's
// terminal, which no kernel sandbox confines.
func TestEditorTerminalNotSandboxed(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no kernel sandbox here: %v", err)
	}
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo from-local"}),
		agentlooptest.Text("done"))
	ed := newRichEditor()
	r := startWith(t, srv, t.TempDir(), cwd, ed.editor, ed, everything, nil)
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "go"); err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, srv, "toolu_1"); got != "from-local" {
		t.Errorf("Bash = %q", got)
	}
	if len(ed.creates) != 0 {
		t.Errorf("a sandboxed command ran in the editor's terminal: %+v", ed.creates)
	}
}
