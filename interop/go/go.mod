module github.com/agentloop/agentloop/interop/go

go 1.24.0

require github.com/google/go-cmp v0.7.0

// The community Go wrappers are not on the module proxy: run.sh points
// these requires at local source trees with replace directives in a
// generated go.mod of its own (see docs/interop.md); this file names no
// path of any machine.
require (
	github.com/roasbeef/claude-agent-sdk-go v0.0.0-00010101000000-000000000000
	github.com/severity1/claude-agent-sdk-go v0.0.0-00010101000000-000000000000
)
