// Package acp serves agentloop sessions to editors over the Agent Client
// Protocol (ACP): JSON-RPC 2.0 on a pair of streams, usually the agent
// process's stdin and stdout. `agentloop acp` runs [Serve] on stdio, so an
// editor that speaks ACP (Zed, JetBrains, Neovim plugins) can use agentloop
// directly, with neither Node nor an adapter.
//
// Each ACP session is one agentloop session ([agentloop.Client]), built
// from a base [agentloop.Options] with the session's working directory,
// additional directories and the editor's MCP servers. The mapping:
//
//   - session/prompt runs one query; its text blocks (and embedded text
//     resources, resource links) become text, its images image blocks.
//     Text and thinking stream as
//     agent_message_chunk and agent_thought_chunk; each tool call is a
//     tool_call (kind, title, locations, and a diff for Edit, MultiEdit and
//     Write) followed by a tool_call_update with its result. The task
//     tools (TaskCreate, TaskUpdate) are mirrored as a plan.
//   - A call that needs approval becomes session/request_permission with
//     three options: allow once, allow always (a session rule: the
//     suggestions the loop offered, else a rule for the whole tool) and
//     reject.
//   - session/cancel cancels the running query; the prompt answers with
//     stop reason "cancelled" and the session stays usable.
//   - The six permission modes are the session's modes
//     (session/set_mode); the models of [agentloop.Client.SupportedModels]
//     its models (session/set_model). A mode the loop changes (an "always
//     allow" that switches to acceptEdits) is sent as current_mode_update.
//   - session/set_config_option sets the options "mode", "model" and
//     "effort" (config.go); sessions report them in configOptions.
//   - The session's slash commands (built-in, file commands, skills) are
//     sent as available_commands_update when it opens; a prompt
//     "/name args" runs one (a local command answers with its output as
//     the agent's message, without a model call).
//   - session/list lists the transcripts of a directory, session/load
//     replays one as updates and resumes it, session/resume resumes it
//     without the replay, session/close ends it.
//   - What the editor offers in initialize is used (through
//     [agentloop.Options.ToolHost]): with fs.readTextFile, Read, Edit and
//     Write read text files with fs/read_text_file, so an unsaved buffer
//     is what they see (and what a Write's diff starts from); with
//     fs.writeTextFile, Edit and Write write with fs/write_text_file; with
//     terminal, a foreground Bash command that the sandbox leaves
//     unconfined runs in a terminal of the editor (terminal/create, the
//     terminal embedded in the call's content, terminal/wait_for_exit,
//     terminal/output, terminal/release; terminal/kill on timeout or
//     cancel). The permission checks, path confinement and read-before-edit
//     state decide first, as without the editor. Sandboxed commands (the
//     default sandbox included) and background commands run as local
//     processes, since no kernel sandbox confines the editor's terminal;
//     images, PDFs and notebooks are read from disk.
//
// Not implemented: audio in prompts (not advertised; such blocks are an
// invalid-params error).
package acp
