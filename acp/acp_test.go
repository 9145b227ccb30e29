package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/acp"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// editor is a scripted ACP client: it records the updates it receives and
// answers permission requests with answer (an option id, or "" to block
// until the request is cancelled).
type editor struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	asked   []sdk.RequestPermissionRequest
	answer  string
	// askedCh, when set, receives each permission request's tool call id.
	askedCh chan string
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n.Update)
	return nil
}

func (e *editor) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.asked = append(e.asked, r)
	answer, ch := e.answer, e.askedCh
	e.mu.Unlock()
	if ch != nil {
		ch <- string(r.ToolCall.ToolCallId)
	}
	if answer == "" {
		<-ctx.Done()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(answer))}, nil
}

// take returns the updates received so far and forgets them.
func (e *editor) take() []sdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.updates
	e.updates = nil
	return u
}

func (e *editor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (e *editor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (e *editor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (e *editor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (e *editor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (e *editor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (e *editor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// rig is an agent served over in-memory pipes to an editor.
type rig struct {
	t    *testing.T
	srv  *agentlooptest.Server
	ed   *editor
	conn *sdk.ClientSideConnection
	cwd  string
	// commands is the available_commands_update that followed the last
	// session/new.
	commands *sdk.SessionAvailableCommandsUpdate
}

// start serves an agent whose sessions talk to srv and keep their
// transcripts in configDir.
func start(t *testing.T, srv *agentlooptest.Server, configDir, cwd string) *rig {
	t.Helper()
	ed := &editor{answer: "allow_once"}
	return startWith(t, srv, configDir, cwd, ed, ed, sdk.ClientCapabilities{}, nil)
}

// startWith is start with the editor's side served by client (ed or a
// type embedding it), the capabilities it advertises, and a change of
// the base options (nil for none).
func startWith(t *testing.T, srv *agentlooptest.Server, configDir, cwd string, ed *editor, client sdk.Client,
	caps sdk.ClientCapabilities, change func(*agentloop.Options)) *rig {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	opts := &agentloop.Options{Provider: p, ConfigDir: configDir, SettingSources: []settings.SettingSource{},
		Tools: []string{"Read", "Write", "Edit", "Bash", "TaskCreate", "TaskUpdate"}}
	if change != nil {
		change(opts)
	}
	toAgentR, toAgentW := io.Pipe()
	toEditorR, toEditorW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- acp.Serve(context.Background(), toAgentR, toEditorW, acp.Config{Options: opts}) }()
	conn := sdk.NewClientSideConnection(client, toAgentW, toEditorR)
	t.Cleanup(func() {
		toAgentW.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		toEditorW.Close()
	})
	r := &rig{t: t, srv: srv, ed: ed, conn: conn, cwd: cwd}
	if _, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) newSession(servers ...sdk.McpServer) sdk.NewSessionResponse {
	r.t.Helper()
	if servers == nil {
		servers = []sdk.McpServer{}
	}
	resp, err := r.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: r.cwd, McpServers: servers})
	if err != nil {
		r.t.Fatal(err)
	}
	r.commands = r.ed.awaitCommands(r.t) // commands_test.go
	return resp
}

func (r *rig) prompt(ctx context.Context, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return r.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// summary renders updates as short lines for comparison.
func summary(us []sdk.SessionUpdate) []string {
	var out []string
	text := ""
	flush := func() {
		if text != "" {
			out = append(out, "text: "+text)
			text = ""
		}
	}
	for _, u := range us {
		switch {
		case u.AgentMessageChunk != nil:
			text += u.AgentMessageChunk.Content.Text.Text
			continue
		case u.UserMessageChunk != nil:
			flush()
			out = append(out, "user: "+u.UserMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil:
			flush()
			out = append(out, "thought: "+u.AgentThoughtChunk.Content.Text.Text)
		case u.ToolCall != nil:
			flush()
			out = append(out, "tool_call "+string(u.ToolCall.Kind)+" "+u.ToolCall.Title)
		case u.ToolCallUpdate != nil:
			flush()
			line := "tool_call_update"
			if s := u.ToolCallUpdate.Status; s != nil {
				line += " " + string(*s)
			}
			for _, c := range u.ToolCallUpdate.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					line += ": " + c.Content.Content.Text.Text
				}
			}
			out = append(out, line)
		case u.CurrentModeUpdate != nil:
			flush()
			out = append(out, "mode: "+string(u.CurrentModeUpdate.CurrentModeId))
		case u.Plan != nil:
			flush()
			var es []string
			for _, e := range u.Plan.Entries {
				es = append(es, e.Content+"="+string(e.Status))
			}
			out = append(out, "plan: "+strings.Join(es, ", "))
		}
	}
	flush()
	return out
}

// TestPromptStreamsText: a prompt's reply reaches the editor as message
// chunks, and the session offers the six permission modes.
func TestPromptStreamsText(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello from the script."))
	r := start(t, srv, t.TempDir(), t.TempDir())
	s := r.newSession()
	var modes []string
	for _, m := range s.Modes.AvailableModes {
		modes = append(modes, string(m.Id))
	}
	if d := cmp.Diff([]string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"}, modes); d != "" {
		t.Errorf("modes (-want +got):\n%s", d)
	}
	if s.Modes.CurrentModeId != "default" {
		t.Errorf("current mode = %q", s.Modes.CurrentModeId)
	}
	resp, err := r.prompt(context.Background(), s.SessionId, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %q", resp.StopReason)
	}
	if d := cmp.Diff([]string{"text: Hello from the script."}, summary(r.ed.take())); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	if got := srv.Requests()[0].LastUserText(); got != "hi" {
		t.Errorf("the model got %q", got)
	}
}

// TestWritePermission: a Write call is shown with its diff, asked about,
// and runs or not by the editor's answer; "allow always" stops the
// asking for the rest of the session.
func TestWritePermission(t *testing.T) {
	for _, tc := range []struct {
		answer    string
		wantFile  bool
		wantAsked int
		want      []string
	}{
		{"allow_once", true, 2, []string{"tool_call edit Write a.txt", "tool_call_update completed",
			"tool_call edit Write a.txt", "tool_call_update completed", "text: done"}},
		// The loop's suggestion for edits is acceptEdits for the session,
		// which the editor is told of.
		{"allow_always", true, 1, []string{"tool_call edit Write a.txt", "tool_call_update completed", "mode: acceptEdits",
			"tool_call edit Write a.txt", "tool_call_update completed", "text: done"}},
		{"reject", false, 2, []string{"tool_call edit Write a.txt", "tool_call_update failed: The user rejected this tool call.",
			"tool_call edit Write a.txt", "tool_call_update failed: The user rejected this tool call.", "text: done"}},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			cwd := t.TempDir()
			path := filepath.Join(cwd, "a.txt")
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": path, "content": "new text\n"}),
				agentlooptest.ToolUse("toolu_2", "Write", map[string]any{"file_path": path, "content": "newer text\n"}),
				agentlooptest.Text("done"))
			r := start(t, srv, t.TempDir(), cwd)
			r.ed.answer = tc.answer
			s := r.newSession()
			if _, err := r.prompt(context.Background(), s.SessionId, "write it"); err != nil {
				t.Fatal(err)
			}
			us := r.ed.take()
			if d := cmp.Diff(tc.want, summary(us)); d != "" {
				t.Errorf("updates (-want +got):\n%s", d)
			}
			if len(r.ed.asked) != tc.wantAsked {
				t.Errorf("asked %d times, want %d", len(r.ed.asked), tc.wantAsked)
			}
			b, err := os.ReadFile(path)
			if tc.wantFile != (err == nil) {
				t.Fatalf("file written = %v, want %v", err == nil, tc.wantFile)
			}
			if tc.wantFile && string(b) != "newer text\n" {
				t.Errorf("file = %q", b)
			}
			// The first tool call carries the diff of the new file.
			tc0 := us[0].ToolCall
			if len(tc0.Content) != 1 || tc0.Content[0].Diff == nil || tc0.Content[0].Diff.NewText != "new text\n" ||
				tc0.Content[0].Diff.Path != path || tc0.Content[0].Diff.OldText != nil {
				t.Errorf("first tool call's content = %+v", tc0.Content)
			}
			if len(tc0.Locations) != 1 || tc0.Locations[0].Path != path {
				t.Errorf("locations = %+v", tc0.Locations)
			}
			// The second shows the old text.
			for _, u := range us[1:] {
				if u.ToolCall != nil {
					if d := u.ToolCall.Content[0].Diff; tc.wantFile && (d.OldText == nil || *d.OldText != "new text\n") {
						t.Errorf("second diff = %+v", d)
					}
				}
			}
		})
	}
}

// TestCancelThenPrompt: session/cancel while a permission request is
// open ends the prompt with "cancelled"; the next prompt works and sends
// a valid history.
func TestCancelThenPrompt(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "mkdir made"}),
		agentlooptest.Text("after the cancel"))
	r := start(t, srv, t.TempDir(), t.TempDir())
	r.ed.answer = ""
	r.ed.askedCh = make(chan string, 1)
	s := r.newSession()
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := r.prompt(context.Background(), s.SessionId, "run it")
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	if id := <-r.ed.askedCh; id != "toolu_1" {
		t.Errorf("asked about %q", id)
	}
	if err := r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-done:
		if resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stop reason = %q", resp.StopReason)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not end after session/cancel")
	}
	r.ed.take()
	r.ed.askedCh = nil
	resp, err := r.prompt(context.Background(), s.SessionId, "again")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %q", resp.StopReason)
	}
	if d := cmp.Diff([]string{"text: after the cancel"}, summary(r.ed.take())); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	last := srv.LastRequest()
	if _, ok := last.ToolResult("toolu_1"); !ok {
		t.Error("the next request has no result for the cancelled call")
	}
}

// TestSetModeAndModel: dontAsk denies without asking; set_model changes
// the next request's model; an unknown mode is an error.
func TestSetModeAndModel(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "mkdir made"}),
		agentlooptest.Text("refused"))
	r := start(t, srv, t.TempDir(), t.TempDir())
	s := r.newSession()
	ctx := context.Background()
	if _, err := r.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "dontAsk"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "sideways"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if _, err := r.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "claude-opus-4-1-20250805"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.prompt(ctx, s.SessionId, "run it"); err != nil {
		t.Fatal(err)
	}
	if len(r.ed.asked) != 0 {
		t.Errorf("dontAsk asked the editor %d times", len(r.ed.asked))
	}
	if got := srv.Requests()[0].Params.Model; got != "claude-opus-4-1-20250805" {
		t.Errorf("model = %q", got)
	}
	if d := cmp.Diff([]string{"tool_call execute `mkdir made`"}, summary(r.ed.take())[:1]); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
}

// TestListAndLoad: a finished session is listed for its directory, and
// loading it in a new connection replays it and continues it.
func TestListAndLoad(t *testing.T) {
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": filepath.Join(cwd, "f.txt")}),
		agentlooptest.Text("The file says hello."),
		agentlooptest.Text("Still here."))
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, srv, cfg, cwd)
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "read f.txt"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := r.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 1 || l.Sessions[0].SessionId != s.SessionId || l.Sessions[0].Title == nil || *l.Sessions[0].Title != "read f.txt" {
		t.Fatalf("sessions = %+v", l.Sessions)
	}

	// The first connection lets the session go; a second one loads it.
	if _, err := r.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	r2 := start(t, srv, cfg, cwd)
	if _, err := r2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"user: read f.txt", "tool_call read Read f.txt",
		"tool_call_update completed: 1\thello\n2\t", "text: The file says hello."}
	got := summary(r2.ed.take())
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replay (-want +got):\n%s", d)
	}
	if _, err := r2.prompt(ctx, s.SessionId, "still there?"); err != nil {
		t.Fatal(err)
	}
	last := srv.LastRequest()
	if n := len(last.Params.Messages); n != 5 {
		t.Errorf("the continued session sent %d messages, want 5", n)
	}
	if _, err := r2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "00000000-0000-0000-0000-000000000000", Cwd: cwd, McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("loading an unknown session succeeded")
	}
}

// TestPlanFromTasks: the task tools' list reaches the editor as a plan.
func TestPlanFromTasks(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "TaskCreate", map[string]any{"subject": "Write the tests", "description": "all of them"}),
		agentlooptest.ToolUse("toolu_2", "TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}),
		agentlooptest.Text("planned"))
	r := start(t, srv, t.TempDir(), t.TempDir())
	s := r.newSession()
	if _, err := r.prompt(context.Background(), s.SessionId, "plan"); err != nil {
		t.Fatal(err)
	}
	var plans []string
	for _, l := range summary(r.ed.take()) {
		if strings.HasPrefix(l, "plan: ") {
			plans = append(plans, l)
		}
	}
	if d := cmp.Diff([]string{"plan: Write the tests=pending", "plan: Write the tests=in_progress"}, plans); d != "" {
		t.Errorf("plans (-want +got):\n%s", d)
	}
}

// TestBadRequests: requests the agent cannot serve are errors that name
// the problem.
func TestBadRequests(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	r := start(t, srv, t.TempDir(), t.TempDir())
	ctx := context.Background()
	if _, err := r.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative", McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(errText(err), "absolute") {
		t.Errorf("relative cwd: %v", errText(err))
	}
	if _, err := r.prompt(ctx, "nope", "hi"); err == nil || !strings.Contains(errText(err), "no open session") {
		t.Errorf("unknown session: %v", errText(err))
	}
	s := r.newSession()
	_, err := r.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.AudioBlock("aGk=", "audio/wav")}})
	if err == nil || !strings.Contains(errText(err), "only text") {
		t.Errorf("audio prompt: %v", errText(err))
	}
	_, err = r.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.ImageBlock("aGk=", "image/tiff")}})
	if err == nil || !strings.Contains(errText(err), `image of type \"image/tiff\"`) {
		t.Errorf("tiff image prompt: %v", errText(err))
	}
	_, err = r.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.ImageBlock("not base64!", "image/png")}})
	if err == nil || !strings.Contains(errText(err), "not base64") {
		t.Errorf("image prompt with bad data: %v", errText(err))
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(err)
	return err.Error() + string(b)
}

// TestServeEmptyInput: an editor that closes the stream at once ends
// Serve cleanly. The connection reads (and logs the close) while Serve is
// still setting it up; under -race this caught the logger being installed
// unsynchronised.
func TestServeEmptyInput(t *testing.T) {
	opts := &agentloop.Options{Provider: agentlooptest.NewTB(t).Provider(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}}
	for range 20 {
		if err := acp.Serve(context.Background(), strings.NewReader(""), io.Discard, acp.Config{Options: opts}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}
