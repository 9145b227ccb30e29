// Package temporal runs agentloop sessions as durable Temporal workflows.
//
// The loop is the same one agentloop.Query runs in-process
// (internal/engine): SessionWorkflow runs its steps as workflow code, and
// every effect is an activity carried out by a worker that holds the
// session's provider, tools and permission rules (Activities). A model
// request is an activity, retried on another worker when the one making it
// dies; each tool call is one, after its permission decision (an activity
// too) is in the history; read-only calls of one reply run concurrently on
// workflow coroutines. A state-changing call whose worker died is never
// run again: the model gets an is_error result saying so
// (InterruptedByWorker).
//
//	c, _ := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
//	w, err := temporal.NewWorker(c, "agents", &agentloop.Options{Provider: p}, nil)
//	if err != nil { … }
//	if err := w.Start(); err != nil { … }
//	for m, err := range temporal.Query(ctx, c, "agents", "Fix the test.", &agentloop.Options{Cwd: dir}) {
//		…
//	}
//
// A Session (Open) holds a conversation across prompts, with Interrupt,
// SetModel and SetPermissionMode, as agentloop.Client does; it continues
// as new between prompts before the workflow's history grows too long.
//
// Query's options are those a SessionInput holds (model, directory,
// prompts, tools and rules, mode, limits); the rest live on the workers'
// Options, and Query refuses them (ErrUnsupported) rather than drop them.
// What the durable loop does not do yet (SessionStart, SessionEnd,
// PreCompact and PostCompact hooks) is reported
// in the stream when a worker's options turn it on.
//
// This is its own module: the core module and the CLI do not link
// Temporal. Its tests start a real Temporal server in the test process
// (go.temporal.io/server/temporaltest); they need Go 1.26.10, so run them
// with GOTOOLCHAIN=go1.27.3.
package temporal
