// Package permission decides whether a tool call may run: allow, deny, or
// ask (the caller then asks canUseTool, a PermissionRequest hook or a
// person, or refuses when there is nobody to ask).
//
// # Rules
//
// A rule is Tool or Tool(specifier); Tool() and Tool(*) mean the whole
// tool. Inside the parentheses "\(" and "\)" stand for parentheses and
// "\\" for a backslash. Rules come in three lists, allow, deny and ask, per
// source (session, cliArg, userSettings, projectSettings, localSettings,
// flagSettings, policySettings).
//
//	Bash(npm run build)           exactly that command
//	Bash(git status:*)            git status alone or with more words (legacy)
//	Bash(npm run *)               '*' matches any text, spaces included; a
//	Bash(git * main)              space before a final '*' keeps the word
//	Bash(ls*)                     boundary and lets the bare head match
//	Read(src/**)                  a path, gitignore style ('*' within a
//	                              segment, '**' across; everything below a
//	                              match matches too)
//	Edit(//etc/hosts)             an absolute path
//	Edit(~/notes/*)               under the home directory
//	Read(/docs/*.md)              under the rule source's directory
//	Read(./build), Read(.env)     under the working directory; as deny and
//	                              ask rules, relative patterns match at any
//	                              depth anywhere
//	WebFetch(domain:go.dev)       one host; domain:*.go.dev its subdomains
//	mcp__github, mcp__github__*   every tool of a server
//	mcp__github__get_*            a tool-name glob (allow rules need the
//	                              literal mcp__<server>__ before the '*')
//	Agent(Explore), Skill(x *)    a subagent type, a skill
//	Agent(model:opus)             deny and ask only: a top-level input field
//
// Edit rules govern Write, NotebookEdit and MultiEdit as well; Read rules
// govern Glob, Grep and LSP, and the files that recognized read-only shell
// commands read. A Read deny rule also blocks writing the path.
//
// Bash rules are matched against each simple command of a command line,
// with quotes removed (g"it" is git) and, for allow rules, the wrappers
// timeout, time, nice, nohup, stdbuf, command, builtin, noglob, exec and a
// bare xargs stripped, and leading assignments of a few harmless variables
// (LANG, TZ, NODE_ENV, …) ignored. A word whose value is only known when
// the command runs ($X, $(…), a glob) can only be covered by a '*'.
//
// # Order
//
// Hooks run first (the caller's job). Then: deny rules (a match anywhere
// in a command line denies all of it, in every mode), ask rules, the mode,
// allow rules, and the tool's defaults (reads inside the working
// directories, read-only shell commands, tools that need no permission).
// What is left is asked.
//
// # Modes
//
//	default            what the rules and defaults allow runs; the rest is asked
//	acceptEdits        also file edits, and mkdir/touch/rm/rmdir/mv/cp/sed -i,
//	                   inside the working directories
//	plan               read-only work runs; edits and any shell command that is
//	                   not read-only are asked even when an allow rule matches
//	dontAsk            what would be asked is denied
//	bypassPermissions  everything runs, except what deny and ask rules catch,
//	                   tools that need a person, and removals of critical paths
//	auto               what would be asked goes to the Classifier (if any); what
//	                   it cannot settle is asked
//
// In every mode, bypassPermissions included, writing a protected path is
// asked, and no allow rule covers it. A path is protected when one of its
// components is .git, .claude (except .claude/worktrees), .vscode, .idea,
// .husky, .ssh or .gnupg, or when its last component is a shell start-up
// file (.bashrc, .bash_profile, .bash_login, .bash_logout, .bash_aliases,
// .profile, .login, .zshrc, .zshenv, .zprofile, .zlogin, .zlogout, .kshrc,
// .cshrc, .tcshrc) or one of .npmrc, .yarnrc, .yarnrc.yml, .mcp.json,
// .claude.json, .gitconfig, .gitmodules, .envrc, .netrc, .pypirc; and
// the paths of Config.Protected (the session's settings files). Writes
// by Bash count: redirections, the operands of the filesystem commands,
// and any argument naming such a path of a command that is not read-only
// (tee, ln, chmod, sed -i, dd of=…). Removing a critical path (/, a
// top-level directory, the home directory or an ancestor, a working
// directory or an ancestor) is asked in every mode too, and so are
// find -delete, find -exec with a program that may change files, and
// rsync --delete… or --remove-source-files on such a path, also behind
// wrappers (sudo, xargs).
//
// # Search tools and deny rules
//
// Grep and Glob are judged on the directory they search. While they walk
// it they drop every file and directory that a Read deny rule (or a deny
// rule of their own tool) covers, under any of its names: the walk's path
// and its physical form (Checker.ReadDenied, Checker.ReadDeniedAs; the
// session hands the filter to the tools as tool.Env.ReadDenied). Their
// glob and type options only narrow the walk.
//
// # Checked paths
//
// For the file tools, Decision.Path is the physical path judged. The
// session hands it to the tool (tool.Env.CheckedPath), which works on that
// path and opens it without following any symbolic link, so that a link
// swapped in between the check and the run makes the call fail instead of
// reaching another file.
//
// # What counts as a write
//
// The file tools (Edit, Write, NotebookEdit, MultiEdit); shell redirections
// to files (>, >>, >|, &>, >&file, <>), except to /dev/null and the
// standard streams; the acceptEdits commands and their path operands; and
// any shell command that is not in the read-only set, whose effects cannot
// be known. Redirections never make a command read-only. Among the
// acceptEdits commands, cp and mv write DEST and DEST/base(SOURCE)
// (DEST/SOURCE with --parents), and sed -i writes the backup its suffix
// names (FILE+SUFFIX, or the suffix with '*' replaced by the file name);
// cp reads its sources. Other commands that write through their options
// (curl -o, wget -O, sort -o, tar -x -C, rsync's destination, …) have those
// paths judged against deny rules and protected paths, and an allow rule
// with a wildcard does not approve options that run programs or delete
// (tar -I or --checkpoint-action, rsync -e or --delete, zip -TT, git -c).
//
// # Read-only commands
//
// Each read-only command's options are parsed as the tool parses them:
// clusters, attached and separate values, "--" and, for long options,
// unambiguous abbreviations (readonly.go, gitcmd.go, grepcmd.go, …). An
// option that writes, runs a program or reaches the network makes the
// command not read-only; every operand and option value that names a file
// is judged as a read; and a read of a whole tree (grep -r, rg, diff,
// git grep --untracked) is asked when a deny or ask rule covers a path
// below it. Every Bash command runs with git configured by the
// environment to ignore planted bare repositories, repository hooks and
// fsmonitor commands (tools/bash_gitenv.go).
//
// # Trust model
//
// The model is not trusted: every command line is parsed (mvdan.cc/sh),
// and whatever cannot be proven safe is asked rather than allowed: parse
// errors, command names that are expansions or globs, arithmetic, function
// definitions, aliases and other changes to the shell's state, assignments
// that change how commands are found, eval and sh -c with texts only known
// when they run, invisible characters. Literal eval and sh -c payloads are
// analysed as commands of their own. Paths are compared after symbolic
// links are resolved (both the link and its target must be allowed, and
// either one denied denies), and a cd in a command line is followed. The
// rule lists, the settings and the working directories are trusted; the
// file system is trusted not to change between the decision and the run,
// except by the command itself, which the checker accounts for by not
// relying on paths after a command that may create links. The file tools
// do not rely on it (see Checked paths); for Bash, the kernel sandbox is
// what holds writes to the paths checked.
//
// Where the parser and bash 5.2 could read a text differently (a comment
// ending in a backslash, unusual here-document delimiters and bodies,
// time --, coproc NAME before a simple command) the line is asked; the
// differential fuzzer (difffuzz_test.go) runs lines in real bash to find
// more. Every command substitution in the tree is analysed for deny rules,
// and text that runs as code where no rule can see it (trap, PS4, BASH_ENV,
// arithmetic on values, namerefs, printf -v and read into subscripts, …)
// is asked whenever any deny or ask rule exists, in every mode.
package permission
