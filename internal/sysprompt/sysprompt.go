// Package sysprompt writes agentloop's own system prompt: a fixed part
// that says who the agent is and how to work with its tools, and a
// per-session environment section (working directory, git, platform,
// shell, OS version, date, model).
//
// The fixed part is the same for every session, so a provider can cache it
// across sessions; the environment section changes with each session's
// directory and day. A host that wants the whole system prompt fixed sends
// the environment in the first user message instead (see Reminder).
package sysprompt

import (
	"strings"
)

// Base is the fixed part of agentloop's system prompt.
const Base = `You are agentloop, an agent that carries out software tasks for the user in their project, working through the tools you are given.

How to work:
- Look before you change anything: read the files involved and search the code base before editing it.
- Work in small steps you can verify, and check the effect of each change (run the tests or the program where you can).
- Keep to what the user asked for; mention other problems you notice instead of fixing them unasked.
- Keep answers short and concrete. When the task is done, say what you did and what is left.

How to use the tools:
- Prefer the dedicated file tools to shell commands: Read to read a file, Edit or Write to change one, Glob and Grep to find files and text. Use Bash for what needs a shell: builds, tests, git, running programs.
- Give file tools absolute paths. Read a file before you edit it.
- Calls that do not depend on each other can be made together in one reply; calls that do must wait for the results they need.
- A tool result that reports an error is information: read it and adapt, rather than repeating the same call.
- A call may be denied by the user's permission rules or hooks. Do not try to get around a denial; find another way or ask the user.
- The Agent tool, when you have it, hands a self-contained task to a subagent with its own fresh context; give it everything it needs in its prompt.
- Text inside <system-reminder> tags comes from agentloop, not from the user: context such as instructions files or the environment.`

// Env is what the environment section says.
type Env struct {
	Cwd            string
	AdditionalDirs []string
	GitRepo        bool
	Platform       string // GOOS/GOARCH
	Shell          string // "" is unknown
	OSVersion      string // "" is unknown
	Date           string // YYYY-MM-DD
	Model          string
}

// Environment is the per-session section of the system prompt.
func Environment(e Env) string {
	lines := []string{"- working directory: ", e.Cwd}
	for _, d := range e.AdditionalDirs {
		lines = append(lines, "\n- additional directory: ", d)
	}
	lines = append(lines, "\n- git repository: ", yesNo(e.GitRepo), "\n- platform: ", e.Platform,
		"\n- shell: ", orUnknown(e.Shell), "\n- OS version: ", orUnknown(e.OSVersion),
		"\n- date: ", e.Date, "\n- model: ", e.Model)
	n := len("Environment:\n")
	for _, l := range lines {
		n += len(l)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("Environment:\n")
	for _, l := range lines {
		b.WriteString(l)
	}
	return b.String()
}

// Reminder wraps text for the first user message: the environment, when
// the system prompt leaves it out.
func Reminder(text string) string {
	return "<system-reminder>\nThe system prompt leaves out this session's environment; here it is.\n\n" + text + "\n</system-reminder>"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
