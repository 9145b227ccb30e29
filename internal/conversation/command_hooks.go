package conversation

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/projectfiles"
	"github.com/agentloop/agentloop/pricing"
)

// Every prompt the user sends goes through UserPromptSubmit first, as
// typed: ordinary text, the built-in "/compact", "/clear" (and its
// aliases), a file command or a skill invoked as "/name", an unknown
// "/word". A block drops the prompt and nothing runs, whatever it was.
//
// A prompt that names a file command or a skill then goes through
// UserPromptExpansion (matchers match the command name): a block keeps
// the command from running (nothing is sent), and its additionalContext
// goes to the model next to the expanded text, with UserPromptSubmit's.
// Only then is the prompt replaced by the command's text; a file
// command's allowed-tools and model apply for the run of that prompt (see
// commandTurn).
//
// The context UserPromptSubmit adds for a built-in command waits for the
// next prompt sent to the model (the engine holds it), as SessionStart's
// after /clear does: those commands send nothing to the model themselves.

// commandTurn is what a file command changes for the run of its prompt.
type commandTurn struct {
	mu    sync.Mutex
	model string // the command's model, "" when it sets none
	prev  string // the model before it
	rules bool   // the command's allowed-tools are in force
}

// promptSubmit is the engine's PromptSubmit hook point of the main loop.
//
// Each hook event it dispatches is a function of its own, not inlined: the
// hook point runs at the deepest point of a turn's stack before its first
// request, and a frame holding every event's input at once would grow the
// stack of every session's goroutine (see engine's streamOnce).
func (s *Session) promptSubmit(ctx context.Context, prompt string) engine.PromptVerdict {
	var v engine.PromptVerdict
	v.Context, s.clearContext = s.clearContext, nil // SessionStart after /clear (clear_session.go)
	if !s.started {
		s.started = true
		if s.sessionStartHook(ctx, &v) {
			return v
		}
	}
	if s.userPromptHook(ctx, prompt, &v) {
		return v
	}
	if _, _, ok := compact.Command(prompt); ok && s.compactCfg != nil || isLocalCommand(prompt) {
		return v // a built-in command; the engine keeps the context for the next prompt
	}
	s.expansionHook(ctx, prompt, &v)
	return v
}

// sessionStartHook runs SessionStart for the session's first prompt,
// adding its context to v; it reports whether a hook halted the run.
//
//go:noinline
func (s *Session) sessionStartHook(ctx context.Context, v *engine.PromptVerdict) bool {
	d := s.hooks
	st := s.noteSessionStart(s.startSource(), d.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: s.startSource(), Model: s.engine().Model()}))
	v.Context = append(v.Context, st.AdditionalContext...)
	if st.Halt {
		v.Halt = &engine.Halt{Reason: st.StopReason}
		return true
	}
	return false
}

// userPromptHook runs UserPromptSubmit on prompt, recording its verdict in
// v; it reports whether a hook halted the run or blocked the prompt.
//
//go:noinline
func (s *Session) userPromptHook(ctx context.Context, prompt string, v *engine.PromptVerdict) bool {
	r := s.hooks.UserPromptSubmit(ctx, hooks.UserPromptSubmitInput{Base: s.hookBase(), Prompt: prompt, Source: "sdk"})
	v.Context = append(v.Context, r.AdditionalContext...)
	v.Blocked, v.Reason = r.Blocked, r.Reason
	if r.SuppressOriginalPrompt {
		s.diag.Add(DiagHook, "UserPromptSubmit: suppressOriginalPrompt has no effect: agentloop does not echo prompts")
	}
	s.promptTitle(r)
	switch {
	case r.Halt:
		v.Halt = &engine.Halt{Reason: r.StopReason}
		return true
	case r.Blocked:
		return true
	}
	return false
}

// expansionHook runs UserPromptExpansion when prompt invokes a file
// command or a skill, and then sets v to send the expanded text.
//
//go:noinline
func (s *Session) expansionHook(ctx context.Context, prompt string, v *engine.PromptVerdict) {
	inv, ok := s.invocation(prompt)
	if !ok {
		return
	}
	x := s.hooks.UserPromptExpansion(ctx, hooks.UserPromptExpansionInput{Base: s.hookBase(), ExpansionType: "slash_command",
		CommandName: inv.name, CommandArgs: inv.args, CommandSource: inv.source, Prompt: prompt})
	if x.SuppressOriginalPrompt {
		s.diag.Add(DiagHook, "UserPromptExpansion: suppressOriginalPrompt has no effect: agentloop does not echo prompts")
	}
	switch {
	case x.Halt:
		v.Halt = &engine.Halt{Reason: x.StopReason}
		return
	case x.Blocked:
		v.Blocked, v.Reason, v.BlockedBy = true, x.Reason, "UserPromptExpansion"
		return
	}
	v.Context = append(v.Context, x.AdditionalContext...)
	text := s.expand(inv)
	v.Replace = &text
	v.Preamble = commandHeader(inv)
}

// invocation is a prompt "/name args" that names a file command or a
// skill.
type invocation struct {
	name, args string
	source     string // project or user
	cmd        *projectfiles.Command
	skill      *projectfiles.Skill
	builtin    *builtinCommand // a built-in prompt command
}

// invocation finds the file command, else the skill, a prompt "/name
// args" names; ok is false for any other prompt (built-in commands
// included).
func (s *Session) invocation(prompt string) (invocation, bool) {
	name, args, ok := projectfiles.ParseInvocation(prompt)
	if !ok || reservedCommand(name) {
		return invocation{}, false
	}
	for i := range s.files.commands {
		if c := &s.files.commands[i]; c.Name == name {
			return invocation{name: name, args: args, source: c.Source, cmd: c}, true
		}
	}
	if sk, ok := s.skill(name); ok {
		return invocation{name: name, args: args, source: sk.Source, skill: &sk}, true
	}
	if b, ok := s.builtinPromptCommand(name); ok {
		return invocation{name: b.name, args: args, source: "builtin", builtin: b}, true
	}
	return invocation{}, false
}

// commandHeader is the text block the reference sends before an
// invoked command's or skill's text: its name and arguments as typed.
func commandHeader(inv invocation) string {
	return fmt.Sprintf("<command-message>%s</command-message>\n<command-name>/%s</command-name>\n<command-args>%s</command-args>\n",
		inv.name, inv.name, inv.args)
}

// expand is the text inv's prompt is replaced by. A skill's allowed-tools
// are granted for the rest of the session (projectfiles.go); a file
// command's allowed-tools and model apply until the run ends
// (endCommandTurn).
func (s *Session) expand(inv invocation) string {
	if inv.builtin != nil {
		return inv.builtin.prompt(s, inv.args)
	}
	if inv.skill != nil {
		s.grantSkillTools(*inv.skill)
		return fmt.Sprintf("Base directory for this skill: %s\n\n%s", inv.skill.Dir, s.guardSkillShell(projectfiles.Expand(inv.skill.Body, inv.args)))
	}
	s.startCommandTurn(*inv.cmd)
	return s.guardSkillShell(projectfiles.Expand(inv.cmd.Body, inv.args))
}

// startCommandTurn puts c's allowed-tools (as allow rules of source
// command) and model in force for the run of its prompt.
func (s *Session) startCommandTurn(c projectfiles.Command) {
	t := &s.run().cmdTurn
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(c.AllowedTools) > 0 && s.checker != nil && !s.policyGrantsOff("a slash command's allowed-tools") {
		var rules []permission.RuleValue
		for _, r := range c.AllowedTools {
			v, err := permission.ParseRule(r)
			if err != nil {
				s.diag.Add(DiagProjectFile, fmt.Sprintf("command /%s: allowed-tools entry %q is not a permission rule: %v", c.Name, r, err))
				continue
			}
			rules = append(rules, v)
		}
		if err := s.checker.SetCommandRules(rules); err != nil {
			s.diag.Add(DiagProjectFile, fmt.Sprintf("command /%s: allowed-tools not granted: %v", c.Name, err))
		} else {
			t.rules = len(rules) > 0
		}
	}
	if m := strings.TrimSpace(c.Model); m != "" && m != "inherit" {
		if err := s.modelAllowed(m, "command /"+c.Name+" model"); err != nil { // managed_policy.go
			s.diag.Add(DiagProjectFile, fmt.Sprintf("%v; the session's model is kept", err))
			return
		}
		t.prev = s.engine().Model()
		t.model = pricing.Resolve(m)
		s.engine().SetModel(t.model)
	}
}

// endCommandTurn ends what startCommandTurn put in force: the command's
// rules go, and the model in use before it comes back, unless the model
// was changed during the run (Client.SetModel), which then stays.
func (s *Session) endCommandTurn() {
	t := &s.run().cmdTurn
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rules {
		if err := s.checker.SetCommandRules(nil); err != nil {
			s.diag.Add(DiagProjectFile, fmt.Sprintf("a command's allowed-tools could not be withdrawn: %v", err))
		}
		t.rules = false
	}
	if t.model != "" {
		if s.engine().Model() == t.model {
			s.engine().SetModel(t.prev)
		}
		t.model, t.prev = "", ""
	}
}
