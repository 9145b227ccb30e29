package tools

import (
	"sync"

	"github.com/agentloop/agentloop/tool"
)

// builtins maps each built-in tool's name to its constructor.
var builtins = map[string]func() tool.Tool{
	"AskUserQuestion": AskUserQuestion,
	"Bash":            Bash,
	"Edit":            Edit,
	"Glob":            Glob,
	"Grep":            Grep,
	"NotebookEdit":    NotebookEdit,
	"Read":            Read,
	"TaskCreate":      TaskCreate,
	"TaskGet":         TaskGet,
	"TaskList":        TaskList,
	"TaskStop":        TaskStop,
	"TaskUpdate":      TaskUpdate,
	"WebFetch":        WebFetch,
	"WebSearch":       WebSearch,
	"Write":           Write,
}

// defaultNames is the default tool set, in the order declared to the model.
var defaultNames = []string{"Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read",
	"TaskStop", "WebFetch", "WebSearch", "Write"}

// onDemand are the built-in tools that tool search may defer: ones a task
// needs now and then, whose definitions need not be in every request. The
// set is the reference's deferred built-ins that agentloop has; the core
// file and shell tools are always declared.
var onDemand = map[string]bool{"NotebookEdit": true, "TaskStop": true, "WebFetch": true, "WebSearch": true}

// OnDemand reports whether the built-in tool called name is one tool
// search may defer (the session decides whether it does).
func OnDemand(name string) bool { return onDemand[name] }

// DefaultNames returns the names of the tools a session gets when it does
// not choose its own.
func DefaultNames() []string { return append([]string(nil), defaultNames...) }

// Names returns the names of all built-in tools.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	return out
}

// shared holds one instance of each built-in tool, built on first use.
var shared = func() map[string]func() tool.Tool {
	m := make(map[string]func() tool.Tool, len(builtins))
	for name, mk := range builtins {
		m[name] = sync.OnceValue(mk)
	}
	return m
}()

// Builtin returns the built-in tool called name. The instance is built
// once per process and shared by every session: a built-in tool is
// immutable (its Info never changes, and it keeps no state of its own; a
// call's state lives in the session's tool.Env), so it is safe for
// concurrent use by any number of sessions. Call the tool's constructor
// (Read, Bash, ...) for an instance of one's own.
func Builtin(name string) (tool.Tool, bool) {
	mk, ok := shared[name]
	if !ok {
		return nil, false
	}
	return mk(), true
}

// Cleanup stops what the tools of a session left running, such as
// background shells. Call it when the session ends.
func Cleanup(env *tool.Env) {
	if env == nil || env.State == nil {
		return
	}
	_ = BackgroundShells(env).Close()
}
