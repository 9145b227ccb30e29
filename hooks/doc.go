// Package hooks runs the hooks of a session: Go callbacks registered in
// code and command, http and prompt hooks from settings files, through
// one Dispatcher.
//
// # Registering hooks
//
// A Go hook is a [Callback] registered for an event under a [Matcher]:
//
//	guard := func(ctx context.Context, in hooks.Input, toolUseID string) (hooks.Output, error) {
//		call := in.(hooks.PreToolUseInput)
//		if strings.Contains(string(call.ToolInput), "rm -rf") {
//			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{
//				HookEventName:            hooks.PreToolUse,
//				PermissionDecision:       hooks.Deny,
//				PermissionDecisionReason: "no recursive deletes",
//			}}, nil
//		}
//		return hooks.Output{}, nil
//	}
//	d, err := hooks.New(hooks.Config{
//		Callbacks: map[hooks.Event][]hooks.Matcher{
//			hooks.PreToolUse: {{Matcher: "Bash", Hooks: []hooks.Callback{guard}}},
//		},
//		Commands:  loaded.Hooks, // settings.Settings.Hooks
//		Cwd:       cwd,
//		SessionID: sessionID,
//	})
//
// Command hooks come from the "hooks" field of settings files, for
// example:
//
//	{"hooks": {"PreToolUse": [{"matcher": "Bash",
//	  "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}
//
// Settings files may also hold http hooks, which POST the input JSON to a
// url and read the answer's body as a command's stdout, and prompt hooks,
// which ask a model (through Config.Prompt) for a {"ok": …} verdict,
// where ok:false blocks as exit code 2 does. Agent and mcp_tool hooks,
// and fields the dispatcher does not honour, are reported in Warnings;
// see New for the decisions field by field. Config.Policy carries the
// managed settings that limit http hooks: the URLs they may post to
// (allowedHttpHookUrls) and the variables their headers may expand
// (httpHookAllowedEnvVars).
//
// # Conditions
//
// A settings hook of a tool event (PreToolUse, PostToolUse,
// PostToolUseFailure, PermissionRequest) may narrow its matcher with an
// "if" field, a permission rule such as "Bash(git *)", "Edit(src/**)" or
// "WebFetch(domain:example.com)":
//
//	{"matcher": "Bash", "hooks": [{"type": "command", "if": "Bash(rm *)",
//	  "command": "echo 'no removals' >&2; exit 2"}]}
//
// The hook runs only when the call is of the rule's tool and, if the rule
// has content, the permission checker's matcher for that tool says a deny
// rule of that text would catch the call: any part of a compound command
// (after &&, ;, a pipe, inside a subshell or a command substitution), a
// file path at any depth for a bare path pattern. A call the checker
// cannot judge (a command it cannot parse, a command name it cannot know,
// text run as code) runs the hook too, but then only a deny or block from
// it counts; an allow or updatedInput is dropped and Config.Debug is told.
// A hook with "if" on any other event never runs, and New warns about it.
//
// # Running an event
//
// Each event has a method that takes the event's input and returns a
// typed result, with every hook's output already merged:
//
//	res := d.PreToolUse(ctx, hooks.PreToolUseInput{ToolName: "Bash", ToolInput: input, ToolUseID: id})
//	if res.Halt { /* end the run, show res.StopReason to the user */ }
//	switch res.Decision {
//	case hooks.Deny: /* tool_result is_error with res.Message */
//	}
//
// The doc comment of each result type says what the engine must do with
// each field.
//
// # How hooks run
//
// The hooks of an event whose matcher matches the event's target (the tool
// name for tool events; see [Matcher]) all run at once, each in its own
// goroutine, and the method returns when the last one finishes. Results
// are merged in registration order, callbacks first and then settings
// hooks, whatever order they finish in: contexts are listed in that order,
// a block from any hook blocks, and PreToolUse decisions rank
// deny > defer > ask > allow.
//
// A command hook runs as `bash -c <command>` in the session's working
// directory, in a process group of its own, with the input as JSON on
// stdin and CLAUDE_PROJECT_DIR in its environment. Its exit status says
// what it meant:
//
//   - 0: stdout, if it is a JSON object, is the hook's [Output]; if it
//     starts with "{" but is not valid JSON, that is reported as a hook
//     error. Plain text becomes context for the model for
//     UserPromptSubmit, UserPromptExpansion and SessionStart, and is
//     otherwise only reported.
//   - 2: a blocking error. stderr goes to the model (PreToolUse denies
//     the call, PostToolUse and Stop give feedback) or to the user
//     (UserPromptSubmit blocks the prompt, UserPromptExpansion the
//     command); events that cannot block
//     report it.
//   - anything else, or a crash: a non-blocking error, reported in the
//     result's Errors and never fatal.
//
// A hook that runs past its timeout (default [DefaultTimeout], 30 s for
// UserPromptSubmit, and a [SessionEndBudget] for all SessionEnd hooks) is
// killed with its whole process group; a callback is abandoned and its
// output ignored. A timed-out PreToolUse hook keeps the tool from running
// and a timed-out UserPromptSubmit or UserPromptExpansion hook blocks the
// prompt; for the other
// events a timeout is only reported.
//
// # Observing
//
// Config.Observer receives a [Notice] as each hook starts and finishes,
// with the fields of the system/hook_started and system/hook_response
// stream lines ([Notice.Fields]), for --include-hook-events.
//
// # Trust
//
// Command hooks run with the privileges of the process. They come from
// settings files, which are trusted configuration: anyone who can write
// a settings file the session loads can run commands as its user.
// Likewise an http hook sends every input of its event (tool inputs,
// prompts) to its url, and a prompt hook sends them to the model.
package hooks
