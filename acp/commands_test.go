package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// awaitCommands waits for the available_commands_update that follows a
// session/new and takes it out of the updates received.
func (e *editor) awaitCommands(t *testing.T) *sdk.SessionAvailableCommandsUpdate {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		i := slices.IndexFunc(e.updates, func(u sdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil })
		if i >= 0 {
			u := e.updates[i].AvailableCommandsUpdate
			e.updates = slices.Delete(e.updates, i, i+1)
			e.mu.Unlock()
			return u
		}
		e.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no available_commands_update after session/new")
	return nil
}

// TestAvailableCommands: a new session advertises the session's slash
// commands (built-in ones with their argument hints), and a prompt that
// names a local one runs it: its output comes back as the agent's
// message, without a model call.
func TestAvailableCommands(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	r := start(t, srv, t.TempDir(), t.TempDir())
	s := r.newSession()
	byName := map[string]sdk.AvailableCommand{}
	for _, c := range r.commands.AvailableCommands {
		byName[c.Name] = c
	}
	for _, name := range []string{"compact", "clear", "context", "model", "init"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("command %q not advertised; got %v", name, r.commands.AvailableCommands)
		}
	}
	if in := byName["model"].Input; in == nil || in.Unstructured == nil || in.Unstructured.Hint == "" {
		t.Errorf("/model has no input hint: %+v", byName["model"])
	}
	resp, err := r.prompt(context.Background(), s.SessionId, "/model haiku")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", resp, err)
	}
	if d := cmp.Diff([]string{"text: Model set to claude-haiku-5-5 for the rest of this session"}, summary(r.ed.take())); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("/model made %d model calls", n)
	}
}

// TestCommandsReadvertised: when /reload-skills finds a new skill, the
// editor gets the session's commands again (available_commands_update),
// the skill among them.
func TestCommandsReadvertised(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	cwd := t.TempDir()
	ed := &editor{answer: "allow_once"}
	r := startWith(t, srv, t.TempDir(), cwd, ed, ed, sdk.ClientCapabilities{}, func(o *agentloop.Options) {
		o.SettingSources = []settings.SettingSource{settings.Project}
	})
	s := r.newSession()
	dir := filepath.Join(cwd, ".claude", "skills", "late")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: late\ndescription: Came late\n---\nLATE-BODY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, err := r.prompt(context.Background(), s.SessionId, "/reload-skills"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", resp, err)
	}
	u := r.ed.awaitCommands(t)
	if !slices.ContainsFunc(u.AvailableCommands, func(c sdk.AvailableCommand) bool { return c.Name == "late" }) {
		t.Errorf("available_commands_update after the reload lacks the new skill: %v", u.AvailableCommands)
	}
}
