package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// StopWait bounds how long stopping a background subagent waits for it to
// end: its run is cancelled, and a tool that ignores cancellation cannot
// hold the session past this.
const StopWait = 5 * time.Second

// Errors of [Registry].
var (
	// ErrNotRunning reports a task that has already ended.
	ErrNotRunning = errors.New("the background subagent is not running")
	// ErrStopTimeout reports a task that did not end within StopWait of
	// being stopped; it ends on its own later.
	ErrStopTimeout = errors.New("the background subagent did not stop in time")
)

// Registry keeps a session's background subagents. Each runs on its own
// goroutine under the context of the main loop's current run (see
// SetRun), so the end or cancellation of that run stops it; TaskStop (the
// registry is attached to the session's background shells) and Close stop
// it too. When one ends, its answer is written to its output file, its
// parent loop is told through the notify function given at launch (stream
// messages) and through Take and Wait (text for the model).
//
// Methods are safe for concurrent use.
type Registry struct {
	dir string

	mu      sync.Mutex
	run     context.Context // the main loop's current run
	tasks   map[string]*bgTask
	pending map[string][]string // notices for the model, by owner loop
	changed chan struct{}       // closed and replaced when a task ends
	started int                 // tasks started, for their order
}

type bgTask struct {
	Task
	owner  string
	cancel context.CancelFunc
	done   chan struct{}
	seq    int  // order of start
	ending bool // its run returned; guarded by Registry.mu
}

type registryKey struct{}

// For returns the background registry of the session whose tool
// environment is env, creating it on first use and attaching it to the
// session's background shells (see tools.Shells.Attach). Output files go
// to the shells' directory. env and env.State must not be nil.
func For(env *tool.Env) *Registry {
	shells := tools.BackgroundShells(env)
	r := env.State.Load(registryKey{}, func() any { return NewRegistry(shells.Dir()) }).(*Registry)
	shells.Attach(r)
	return r
}

// NewRegistry returns an empty registry whose output files go to dir.
func NewRegistry(dir string) *Registry {
	return &Registry{dir: dir, tasks: map[string]*bgTask{}, pending: map[string][]string{}, changed: make(chan struct{})}
}

// SetRun records ctx, the context of the main loop's run that starts:
// subagents launched from now on stop when it is done. Subagents of the
// main loop that still run belong to a run that has ended and are being
// stopped; SetRun waits for them (at most StopWait) so that their notices
// are ready for the new run.
func (r *Registry) SetRun(ctx context.Context) {
	_ = r.stopWhere(func(t *bgTask) bool { return t.owner == "" })
	r.mu.Lock()
	r.run = ctx
	r.mu.Unlock()
}

// Launch is what starting a background subagent takes.
type Launch struct {
	// Task describes it; Task.OutputFile is set by Start.
	Task Task
	// Owner is the agent id of the loop that started it ("" for the main
	// loop); its notices are kept for that loop.
	Owner string
	// Run runs the subagent under ctx and reports how it ended; it may
	// fill in Task's worktree fields through the pointer it gets.
	Run func(ctx context.Context, t *Task) Outcome
	// Started, when set, is called with the task (its output file set)
	// before the subagent starts, so that what it reports comes first.
	Started func(Task)
	// Notify is called, on the subagent's goroutine, when it has ended;
	// it puts the end into the parent loop's stream.
	Notify func(Outcome, Task)
}

// Start creates l's output file and starts the subagent; it returns the
// task with its output file at once.
func (r *Registry) Start(l Launch) (Task, error) {
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return Task{}, fmt.Errorf("creating the task directory: %w", err)
	}
	path := filepath.Join(r.dir, l.Task.ID+".output")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Task{}, fmt.Errorf("creating the output file: %w", err)
	}
	f.Close()
	t := &bgTask{Task: l.Task, owner: l.Owner, done: make(chan struct{})}
	t.OutputFile = path
	r.mu.Lock()
	base := r.run
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(base))
	stopOnEnd := context.AfterFunc(base, cancel)
	t.cancel = cancel
	r.started++
	t.seq = r.started
	r.tasks[t.ID] = t
	r.mu.Unlock()
	if l.Started != nil {
		l.Started(t.Task)
	}
	go func() {
		defer cancel()
		defer stopOnEnd()
		task := t.Task
		o := l.Run(ctx, &task)
		if ctx.Err() != nil {
			o.Stopped = true
		}
		_ = os.WriteFile(path, []byte(o.Report()+"\n"), 0o600) // the notice carries the report as well
		r.mu.Lock()
		t.ending = true // no longer in the live set its Notify tells
		r.mu.Unlock()
		if l.Notify != nil {
			l.Notify(o, task)
		}
		r.mu.Lock()
		r.pending[t.owner] = append(r.pending[t.owner], NoticeText(task, o))
		close(t.done)
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}()
	return t.Task, nil
}

func (t *bgTask) running() bool {
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

// LiveTasks lists the running background subagents, in the order they
// started, as a system/background_tasks_changed line shows them (see
// tools.LiveTasks): a task whose run has returned is left out, though its
// end may not have been told yet.
func (r *Registry) LiveTasks() []tools.BackgroundTask {
	r.mu.Lock()
	live := make([]*bgTask, 0, len(r.tasks))
	for _, t := range r.tasks {
		if !t.ending && t.running() {
			live = append(live, t)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(live, func(a, b *bgTask) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]tools.BackgroundTask, len(live))
	for i, t := range live {
		out[i] = tools.BackgroundTask{TaskID: t.ID, RunID: t.RunID, TaskType: "local_agent", SubagentType: t.Type, Description: t.Description}
	}
	return out
}

// Running counts the tasks of the loop owner that still run.
func (r *Registry) Running(owner string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.tasks {
		if t.owner == owner && t.running() {
			n++
		}
	}
	return n
}

// Take returns and forgets the notices kept for the loop owner, oldest
// first.
func (r *Registry) Take(owner string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.pending[owner]
	delete(r.pending, owner)
	return out
}

// Wait returns once the loop owner has a notice to take, none of its tasks
// runs any more, or ctx is done.
func (r *Registry) Wait(ctx context.Context, owner string) {
	for {
		r.mu.Lock()
		ready := len(r.pending[owner]) > 0
		ch := r.changed
		r.mu.Unlock()
		if ready || r.Running(owner) == 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// Stop stops the task id and waits, at most StopWait, for it to end.
func (r *Registry) Stop(id string) error {
	r.mu.Lock()
	t, ok := r.tasks[id]
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("no background subagent %q", id)
	}
	if !t.running() {
		return fmt.Errorf("%w: %s", ErrNotRunning, id)
	}
	t.cancel()
	return r.await([]*bgTask{t})
}

func (r *Registry) await(ts []*bgTask) error {
	timer := time.NewTimer(StopWait)
	defer timer.Stop()
	for _, t := range ts {
		select {
		case <-t.done:
		case <-timer.C:
			return fmt.Errorf("%w within %v", ErrStopTimeout, StopWait)
		}
	}
	return nil
}

// StopOwned stops the tasks of the loop owner that still run (when that
// loop ends) and waits for them as Stop does.
func (r *Registry) StopOwned(owner string) error {
	return r.stopWhere(func(t *bgTask) bool { return t.owner == owner })
}

func (r *Registry) stopWhere(match func(*bgTask) bool) error {
	r.mu.Lock()
	var ts []*bgTask
	for _, t := range r.tasks {
		if match(t) && t.running() {
			ts = append(ts, t)
		}
	}
	r.mu.Unlock()
	for _, t := range ts {
		t.cancel()
	}
	return r.await(ts)
}

// StopTask stops the task id for TaskStop; it implements tools.OtherTasks.
func (r *Registry) StopTask(id string) (tools.TaskStopResult, bool, error) {
	r.mu.Lock()
	t, ok := r.tasks[id]
	r.mu.Unlock()
	if !ok {
		return tools.TaskStopResult{}, false, nil
	}
	if err := r.Stop(id); err != nil {
		return tools.TaskStopResult{}, true, err
	}
	msg := fmt.Sprintf("Stopped background subagent %s (%s)", id, t.Description)
	return tools.TaskStopResult{Message: msg, TaskID: id, TaskType: "local_agent"}, true, nil
}

// Close stops every task that still runs, waiting at most StopWait, and
// removes the output files. It implements tools.OtherTasks.
func (r *Registry) Close() error {
	err := r.stopWhere(func(*bgTask) bool { return true })
	r.mu.Lock()
	var paths []string
	for _, t := range r.tasks {
		if !t.running() {
			paths = append(paths, t.OutputFile)
		}
	}
	r.mu.Unlock()
	errs := []error{err}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
