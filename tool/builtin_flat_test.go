package tool_test

import (
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// TestBuiltinSchemasTakeFlatPath: the built-in tools' flat schemas compile
// without the general validator, so that a process that never sees an
// invalid call never resolves them (the CLI's start-up memory). A schema
// that stops being plain enough fails here rather than quietly costing
// every run.
func TestBuiltinSchemasTakeFlatPath(t *testing.T) {
	flat := map[string]bool{"Bash": true, "Read": true, "Write": true, "Edit": true, "Glob": true}
	for _, name := range tools.Names() {
		tl, ok := tools.Builtin(name)
		if !ok {
			t.Fatalf("tools.Names lists %q, which tools.Builtin does not know", name)
		}
		raw := tl.Info().InputSchema
		if got := tool.TakesFlatPath(raw); flat[name] && !got {
			t.Errorf("%s: its schema no longer takes the flat path:\n%s", name, raw)
		}
	}
}
