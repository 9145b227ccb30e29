package tools

import (
	"sort"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/tool"
)

// builtin is one built-in tool: its name, its constructor and the
// instance Builtin shares, made at the first call.
type builtin struct {
	name   string
	mk     func() tool.Tool
	shared lazy.Value[tool.Tool]
}

// builtins are the built-in tools, sorted by name. The table is static
// data, which costs a process nothing until it looks a tool up.
var builtins = [...]builtin{
	{name: "AskUserQuestion", mk: AskUserQuestion},
	{name: "Bash", mk: Bash},
	{name: "Edit", mk: Edit},
	{name: "Glob", mk: Glob},
	{name: "Grep", mk: Grep},
	{name: "NotebookEdit", mk: NotebookEdit},
	{name: "Read", mk: Read},
	{name: "TaskCreate", mk: TaskCreate},
	{name: "TaskGet", mk: TaskGet},
	{name: "TaskList", mk: TaskList},
	{name: "TaskStop", mk: TaskStop},
	{name: "TaskUpdate", mk: TaskUpdate},
	{name: "WebFetch", mk: WebFetch},
	{name: "WebSearch", mk: WebSearch},
	{name: "Write", mk: Write},
}

// lookupBuiltin returns the built-in tool called name, nil if there is
// none.
func lookupBuiltin(name string) *builtin {
	i := sort.Search(len(builtins), func(i int) bool { return builtins[i].name >= name })
	if i == len(builtins) || builtins[i].name != name {
		return nil
	}
	return &builtins[i]
}

// defaultNames is the default tool set, in the order declared to the model.
var defaultNames = []string{"Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read",
	"TaskStop", "WebFetch", "WebSearch", "Write"}

// OnDemand reports whether the built-in tool called name is one tool
// search may defer (the session decides whether it does): one a task
// needs now and then, whose definition need not be in every request. The
// set is the reference's deferred built-ins that agentloop has; the core
// file and shell tools are always declared.
func OnDemand(name string) bool {
	switch name {
	case "NotebookEdit", "TaskStop", "WebFetch", "WebSearch":
		return true
	}
	return false
}

// DefaultNames returns the names of the tools a session gets when it does
// not choose its own.
func DefaultNames() []string { return append([]string(nil), defaultNames...) }

// Names returns the names of all built-in tools.
func Names() []string {
	out := make([]string, len(builtins))
	for i := range builtins {
		out[i] = builtins[i].name
	}
	return out
}

// Builtin returns the built-in tool called name. The instance is built
// once per process and shared by every session: a built-in tool is
// immutable (its Info never changes, and it keeps no state of its own; a
// call's state lives in the session's tool.Env), so it is safe for
// concurrent use by any number of sessions. Call the tool's constructor
// (Read, Bash, ...) for an instance of one's own.
func Builtin(name string) (tool.Tool, bool) {
	b := lookupBuiltin(name)
	if b == nil {
		return nil, false
	}
	return b.shared.Get(b.mk), true
}

// Cleanup stops what the tools of a session left running, such as
// background shells. Call it when the session ends.
func Cleanup(env *tool.Env) {
	if env == nil || env.State == nil {
		return
	}
	_ = BackgroundShells(env).Close()
}
