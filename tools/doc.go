// Package tools holds agentloop's built-in tools: the file, search, shell
// and web tools a coding agent works with, each a [tool.Tool] built with
// [tool.New].
//
// # The tools
//
// Files:
//
//   - [Read] shows a file with line numbers ("1\tfirst line"), up to 2000
//     lines per call (offset and limit page through longer files); images
//     come back as image blocks, PDFs as document blocks, Jupyter notebooks
//     cell by cell.
//   - [Write] creates or replaces a whole file.
//   - [Edit] replaces an exact string in a file, once or everywhere.
//   - [NotebookEdit] changes the cells of a Jupyter notebook.
//
// Search:
//
//   - [Glob] lists files whose paths match a pattern such as "**/*.go",
//     newest first.
//   - [Grep] searches file contents with a regular expression, with
//     ripgrep's behaviour (ignore files, hidden and binary files skipped)
//     implemented in Go; no rg binary is needed.
//
// Shell, tasks and the web: [Bash] runs commands (in the background too,
// stopped with [TaskStop]); [TaskCreate], [TaskGet] and [TaskList] keep a
// task list; [WebFetch] and [WebSearch] reach the web.
//
// Every tool reports two things: the content the model reads (the
// tool_result) and a structured value, [tool.Result].Structured, that the
// loop reports to its host as the tool_use_result, such as [ReadTextResult],
// [EditResult] or [GrepFilesResult]. The result formats and structured
// values follow the reference agent (Claude Code) wherever its recordings
// fix them, so that transcripts and hosts written for it work unchanged;
// the wording of notes and errors is agentloop's own.
//
// # How the loop uses them
//
// A session gets a set of tools by name: [Builtin] returns a fresh tool for
// a name, [DefaultNames] lists the default set. Before each call the loop
// validates the model's input against the tool's schema and fills in its
// defaults, so a tool sees only well-formed input; a tool's own failure (a
// missing file, an ambiguous edit) comes back as an is_error result that
// the model can act on, and never stops the run. Read, Glob and Grep are
// read-only, so the calls of one reply to them run concurrently; Write,
// Edit and Bash run one at a time, in order.
//
// The tools share per-session state through [tool.Env].State. The file
// tools use it to remember what the model has seen: Read records each file
// it shows (its modification time and a hash of its content); Write and
// Edit refuse to change a file that changed on disk since the model last
// read it, and tell the model to read it again, so that an edit is never
// based on stale text. Call [Cleanup] when a session ends to stop what its
// tools left running.
//
// A minimal use outside the loop:
//
//	env := &tool.Env{Cwd: "/work/project", State: &tool.State{}}
//	read := tools.Read()
//	in := json.RawMessage(`{"file_path": "/work/project/go.mod"}`)
//	res, err := read.Run(ctx, &tool.Call{ID: "1", Input: in, Env: env})
//	fmt.Println(res.Text()) // 1	module example.com/project ...
//
// # Paths
//
// Read, Write and Edit take absolute paths ("~/" counts); Glob and Grep
// also accept paths relative to the working directory. [ResolvePath] gives
// the path an operation really reaches, symbolic links resolved, for
// permission checks made before a tool runs.
//
// # Trust model
//
// The tools run with the privileges of the process: Read reads whatever
// the process may read, Write and Edit write wherever it may write, Bash
// runs any command. They do not decide what the model may do. Permissions
// (modes, allow and deny rules, hooks, the host's canUseTool callback) are
// enforced by the loop before Run is called; a tool that runs has been
// allowed. A session can also confine each Bash command with the kernel
// (the sandbox settings, and always in plan mode, on Linux with Landlock):
// the session installs the policy, and Bash starts the command under it.
// The other tools run unconfined in the process, so run agents on
// untrusted input only inside a sandbox (a container, a virtual machine,
// a separate user) that bounds what the process itself can do.
package tools
