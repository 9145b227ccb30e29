package sandbox

import (
	"context"
	"sync/atomic"

	"github.com/agentloop/agentloop/tool"
)

// Request describes a Bash command about to start.
type Request struct {
	Command string
	// Unsandboxed is the call's dangerouslyDisableSandbox: a request to
	// run outside the sandbox, which the Decider may refuse.
	Unsandboxed bool
}

// Decider chooses the policy for one command: a nil policy runs it
// unsandboxed, an error refuses to run it (the error is shown to the
// model). It must be safe for concurrent use.
type Decider func(ctx context.Context, req Request) (*Policy, error)

type deciderKey struct{}

type deciderHolder struct{ d atomic.Pointer[Decider] }

func holder(st *tool.State) *deciderHolder {
	return st.Load(deciderKey{}, func() any { return new(deciderHolder) }).(*deciderHolder)
}

// SetDecider installs the session's Decider in its tool state.
func SetDecider(st *tool.State, d Decider) {
	if st != nil {
		holder(st).d.Store(&d)
	}
}

// DeciderOf returns the Decider of a session's tool state, or nil when
// there is none (commands then run unsandboxed).
func DeciderOf(st *tool.State) Decider {
	if st == nil {
		return nil
	}
	if d := holder(st).d.Load(); d != nil {
		return *d
	}
	return nil
}
