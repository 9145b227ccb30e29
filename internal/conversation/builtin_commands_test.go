package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/settings"
)

// commandRun is what one prompt of a TestBuiltinCommands case did.
type commandRun struct {
	msgs   []agentloop.Message
	result *agentloop.ResultMessage
	shown  string // the text of the synthetic assistant message, if any
}

// TestBuiltinCommands: every built-in command does what it says,
// observably. Local commands answer without a model call, with a result
// that names them and a synthetic message carrying their output (whose
// record the next request shows the model); prompt commands send their
// own instructions under the command's markup; /compact and /clear do
// their work. Every advertised built-in command has a case here.
func TestBuiltinCommands(t *testing.T) {
	cases := []struct {
		name   string
		before func(e *cmdEnv) // runs first (before the command)
		prompt string
		local  string // the result's local_command for a local command
		want   string // in the shown output (local) or the request's last user text (prompt)
		check  func(e *cmdEnv, r commandRun)
	}{
		{name: "compact", before: hello, prompt: "/compact", check: func(e *cmdEnv, r commandRun) {
			if !slices.ContainsFunc(r.msgs, func(m agentloop.Message) bool {
				s, ok := m.(*agentloop.SystemMessage)
				return ok && s.Subtype == "compact_boundary"
			}) {
				e.t.Errorf("/compact emitted no compact_boundary: %v", r.msgs)
			}
		}},
		{name: "clear", before: hello, prompt: "/clear", check: func(e *cmdEnv, r commandRun) {
			if !slices.ContainsFunc(r.msgs, func(m agentloop.Message) bool { _, ok := m.(*agentloop.ConversationResetMessage); return ok }) {
				e.t.Errorf("/clear emitted no conversation_reset")
			}
		}},
		{name: "context", prompt: "/context", local: "context", want: "| System tools |"},
		{name: "usage", before: hello, prompt: "/cost", local: "usage", want: "claude-opus-5-5: 10 input, 5 output"},
		{name: "model", prompt: "/model haiku", local: "model", want: "Model set to claude-haiku-5-5", check: func(e *cmdEnv, r commandRun) {
			req := next(e)
			if req.Params.Model != "claude-haiku-5-5" {
				e.t.Errorf("next request's model %q", req.Params.Model)
			}
			if !strings.Contains(req.Params.Messages[0].Content[2].Text, "<local-command-stdout>Model set to claude-haiku-5-5") {
				e.t.Errorf("the next request does not record the command's output: %.400s", req.Body)
			}
		}},
		{name: "effort", prompt: "/effort low", local: "effort", want: "Effort set to low", check: func(e *cmdEnv, r commandRun) {
			if req := next(e); req.Params.Output == nil || req.Params.Output.Effort != "low" {
				e.t.Errorf("next request's output config %+v", req.Params.Output)
			}
		}},
		{name: "mcp", prompt: "/mcp", local: "mcp", want: "No MCP servers are configured"},
		{name: "agents", prompt: "/agents", local: "agents", want: "general-purpose:"},
		{name: "rename", prompt: "/rename Release notes", local: "rename", want: "Session title set to: Release notes", check: func(e *cmdEnv, r commandRun) {
			if !slices.ContainsFunc(r.msgs, func(m agentloop.Message) bool {
				s, ok := m.(*agentloop.SystemMessage)
				return ok && s.Subtype == conversation.SubtypeSessionTitleChanged && string(s.Data["title"]) == `"Release notes"`
			}) {
				e.t.Errorf("no session_title_changed: %v", r.msgs)
			}
			files, _ := filepath.Glob(filepath.Join(e.config, "projects", "*", e.c.SessionID()+".jsonl"))
			if len(files) != 1 {
				e.t.Fatalf("transcript %v", files)
			}
			if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), `"customTitle":"Release notes"`) {
				e.t.Errorf("transcript has no custom title:\n%s", b)
			}
		}},
		{name: "reload-skills", before: func(e *cmdEnv) {
			dir := filepath.Join(e.cwd, ".claude", "skills", "late")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				e.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: late\ndescription: Came late\n---\nLATE-BODY\n"), 0o644); err != nil {
				e.t.Fatal(err)
			}
		}, prompt: "/reload-skills", local: "reload_skills", want: "Added: /late", check: func(e *cmdEnv, r commandRun) {
			if !slices.ContainsFunc(e.c.SupportedCommands(), func(c agentloop.SlashCommand) bool { return c.Name == "late" }) {
				e.t.Error("the reloaded skill is not a command")
			}
			// The stream gives the new list, the skill in it (commands_changed).
			var changed []agentloop.SlashCommand
			for _, m := range r.msgs {
				if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == agentloop.SubtypeCommandsChanged {
					if err := json.Unmarshal(s.Data["commands"], &changed); err != nil {
						e.t.Errorf("commands_changed commands %s: %v", s.Data["commands"], err)
					}
				}
			}
			if diff := cmp.Diff(e.c.SupportedCommands(), changed); diff != "" {
				e.t.Errorf("commands_changed lists (-SupportedCommands +line):\n%s", diff)
			}
			// Reloading again changes nothing, and says nothing of it.
			for m, err := range e.c.Query(context.Background(), "/reload-skills") {
				if s, ok := m.(*agentloop.SystemMessage); err == nil && ok && s.Subtype == agentloop.SubtypeCommandsChanged {
					e.t.Error("commands_changed after a reload that changed nothing")
				}
			}
		}},
		{name: "init", prompt: "/init", want: "write a CLAUDE.md file"},
		{name: "code-review", prompt: "/code-review HEAD~2", want: "The user named this target or added this: HEAD~2"},
		{name: "security-review", prompt: "/security-review", want: "security problems"},
		{name: "simplify", prompt: "/simplify", want: "make it simpler without changing what it does"},
	}
	var covered []string
	for _, tc := range cases {
		covered = append(covered, tc.name)
		t.Run(tc.name, func(t *testing.T) {
			cwd, config := t.TempDir(), t.TempDir()
			srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"))
			c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
				SettingSources: []settings.SettingSource{settings.Project}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			e := &cmdEnv{t: t, cwd: cwd, config: config, srv: srv, c: c}
			e.run = func(prompt string) commandRun {
				var r commandRun
				for m, err := range c.Query(context.Background(), prompt) {
					if err != nil {
						t.Fatalf("%s: %v", prompt, err)
					}
					r.msgs = append(r.msgs, m)
					switch m := m.(type) {
					case *agentloop.ResultMessage:
						r.result = m
					case *agentloop.AssistantMessage:
						if m.Message.Model == "<synthetic>" {
							r.shown = m.Message.Text()
							if m.LocalCommandSource != "<local-command-stdout>"+r.shown+"</local-command-stdout>" || m.LocalCommandRun == nil {
								t.Errorf("synthetic line %+v", m)
							}
						}
					}
				}
				return r
			}
			if tc.before != nil {
				tc.before(e)
			}
			calls := len(srv.Requests())
			r := e.run(tc.prompt)
			if r.result == nil || r.result.IsError {
				t.Fatalf("result %+v", r.result)
			}
			if tc.local != "" {
				if r.result.LocalCommand != tc.local || r.result.NumTurns != 0 || r.result.StopReason != nil {
					t.Errorf("result local_command %q num_turns %d stop_reason %v", r.result.LocalCommand, r.result.NumTurns, r.result.StopReason)
				}
				if n := len(srv.Requests()) - calls; n != 0 {
					t.Errorf("a local command made %d model calls", n)
				}
				if !strings.Contains(r.shown, tc.want) || r.result.Text() != r.shown {
					t.Errorf("output %q (result %q), want it to hold %q", r.shown, r.result.Text(), tc.want)
				}
			} else if tc.want != "" {
				last := srv.Requests()[len(srv.Requests())-1]
				text := last.LastUserText()
				if !strings.Contains(text, "<command-name>/"+tc.name+"</command-name>") || !strings.Contains(text, tc.want) {
					t.Errorf("the prompt sent for /%s:\n%s", tc.name, text)
				}
			}
			if tc.check != nil {
				tc.check(e, r)
			}
		})
	}
	if missing := slices.DeleteFunc(conversation.BuiltinCommandNames(), func(n string) bool { return slices.Contains(covered, n) }); len(missing) > 0 {
		t.Errorf("built-in commands without a case: %v", missing)
	}
}

// cmdEnv is a TestBuiltinCommands case's session.
type cmdEnv struct {
	t      *testing.T
	cwd    string
	config string
	srv    *agentlooptest.Server
	c      *agentloop.Client
	run    func(prompt string) commandRun
}

// hello runs one ordinary prompt first.
func hello(e *cmdEnv) { e.run("hello") }

// next runs one more ordinary prompt and returns its request.
func next(e *cmdEnv) *agentlooptest.Request {
	e.run("next")
	reqs := e.srv.Requests()
	return reqs[len(reqs)-1]
}
