package temporal

import (
	"fmt"

	"github.com/agentloop/agentloop"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Worker runs session workflows and their activities from one task queue.
// Stop it with Stop, which also closes the sessions it holds.
type Worker struct {
	worker.Worker
	acts *Activities
}

// NewWorker returns a worker for the session workflows of queue on c. opts
// are the base of every session it runs (provider, custom tools, hooks,
// CanUseTool, settings); a session's SessionInput goes on top (see
// Query). The worker does not poll until Start or Run. wopts may be nil.
// A nil client or an empty queue is an error.
func NewWorker(c client.Client, queue string, opts *agentloop.Options, wopts *worker.Options) (*Worker, error) {
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: no Temporal client", agentloop.ErrInvalidOption)
	case queue == "":
		return nil, fmt.Errorf("%w: no task queue", agentloop.ErrInvalidOption)
	}
	var o worker.Options
	if wopts != nil {
		o = *wopts
	}
	w := worker.New(c, queue, o)
	acts := newActivities(c, opts)
	w.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: activityPrefix})
	return &Worker{Worker: w, acts: acts}, nil
}

// SessionBase makes f, rather than the Options given to NewWorker, the
// base of each session the worker runs: f gets the session's input (its
// Cwd, its id) and returns the options it starts from; the input goes on
// top as usual. A host uses it for what depends on the session, such as
// the confinement of its files (serve.Server.SessionOptions). An error of
// f fails the session. Call it before Start or Run.
func (w *Worker) SessionBase(f func(in SessionInput) (*agentloop.Options, error)) {
	w.acts.baseOf = f
}

// Run polls until interruptCh delivers (see worker.InterruptCh), then
// stops and closes the sessions the worker holds.
func (w *Worker) Run(interruptCh <-chan any) error {
	err := w.Worker.Run(interruptCh)
	w.acts.close()
	return err
}

// Stop stops polling and closes the sessions the worker holds.
func (w *Worker) Stop() {
	w.Worker.Stop()
	w.acts.close()
}
