package conversation

import "strings"

// The texts of the prompt commands (builtin_commands.go): instructions
// for the model, agentloop's own, that replace the prompt "/name args" as
// a file command's body does.

// withTarget appends what the user gave after the command.
func withTarget(text, args string) string {
	if args = strings.TrimSpace(args); args != "" {
		text += "\n\nThe user named this target or added this: " + args
	}
	return text
}

// initPrompt is /init.
func initPrompt(_ *Session, args string) string {
	return withTarget(`Study this repository and write a CLAUDE.md file at its root for the coding agents that will work in it later. If a CLAUDE.md already exists, improve it instead of starting over, and keep what is still true.

Find out, from the files themselves (build files, CI configuration, READMEs, scripts, existing agent or editor rule files):
- how to build the project, run all its tests and run one test, and how it is linted and formatted;
- its overall structure: the main packages or modules, how they depend on one another, and where a request or a command flows through the code;
- the conventions a newcomer would break without being told (naming, error handling, generated files, what must not be edited by hand).

Keep the file short and specific to this project: leave out advice any competent engineer already follows, do not list every file, and do not invent commands or facts you did not see. Start it with a one-line title and a one-paragraph summary of what the project is.`, args)
}

// codeReviewPrompt is /code-review [target].
func codeReviewPrompt(_ *Session, args string) string {
	return withTarget(`Review the pending changes for defects. Unless a target is given below, the changes are the working tree's uncommitted changes and the commits of the current branch that its upstream or main branch does not have (use git to find them).

Read each changed file far enough around every change to understand it. Look for real bugs: wrong logic, unhandled errors and edge cases, races, resource leaks, broken contracts with callers, and tests that no longer test what they claim. Do not report matters of taste.

Report each finding with its file and line, what goes wrong and when, how sure you are, and a concrete fix. Order them by severity. If you find nothing worth fixing, say so plainly. Do not change any file.`, args)
}

// securityReviewPrompt is /security-review.
func securityReviewPrompt(_ *Session, args string) string {
	return withTarget(`Review the pending changes on the current branch for security problems: the working tree's uncommitted changes and the commits that the branch's upstream or main branch does not have (use git to find them).

Consider how untrusted input reaches the changed code, and look for injection (shell, SQL, path, template), missing or weakened authentication and authorisation, secrets in code or logs, unsafe deserialisation, unsafe file handling, and cryptography used wrongly. Only report a problem you can explain with a plausible way to exploit it; leave out general hardening advice.

For each finding give the file and line, the attack, its impact, your confidence, and a fix. If the changes look safe, say so. Do not change any file.`, args)
}

// simplifyPrompt is /simplify [target].
func simplifyPrompt(_ *Session, args string) string {
	return withTarget(`Look at the recently changed code (the uncommitted changes and the current branch's own commits, unless a target is given below) and make it simpler without changing what it does.

Look for duplicated logic that an existing helper already covers, needless indirection or abstraction, dead code, overly clever constructs, and work done more often than needed. Keep the project's style. Make the changes, keep them small and behaviour-preserving, run the relevant tests afterwards, and finish with a short list of what you changed and why.`, args)
}
