// Package subagent runs the subagents of a session. [Spawner] is the
// Agent tool: it checks a call, resolves the child's model, effort and
// tools, and starts it in the foreground ([Run]) or in the background
// ([Registry]), optionally in a git worktree of its own ([NewWorktree]),
// with the SubagentStart and SubagentStop hooks around it.
//
// The host (internal/conversation) builds the child engine session from a
// [Child] with its prompt, tools and the session's lineage; this package
// runs it, collects what the Agent tool reports, keeps the background
// tasks, tells their parent loop when they end (as context for the model
// and as stream messages), and creates and cleans up worktrees.
package subagent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// Statuses of a finished subagent, as task_notification reports them.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusStopped   = "stopped"
)

// Outcome is how one run of a subagent ended.
type Outcome struct {
	// Result is the child's result; nil when Err is set.
	Result *message.Result
	// Err is the error the child's run returned (cancelled, consumer
	// gone).
	Err error
	// Stopped is set when the run was stopped from outside (TaskStop,
	// the end of the parent's run) or by the shared budget.
	Stopped  bool
	ToolUses int64
	Duration time.Duration
}

// Status is completed, failed or stopped.
func (o Outcome) Status() string {
	switch {
	case o.Stopped:
		return StatusStopped
	case o.Err != nil || o.Result == nil || o.Result.IsError:
		return StatusFailed
	}
	return StatusCompleted
}

// Report is the subagent's final answer, or for a run that did not
// complete, what went wrong.
func (o Outcome) Report() string {
	switch {
	case o.Result == nil && o.Err != nil:
		return "The subagent stopped: " + o.Err.Error()
	case o.Result == nil:
		return ""
	case o.Result.IsError:
		if d := strings.Join(o.Result.Errors, "; "); d != "" {
			return d
		}
	}
	return o.Result.Text()
}

// Usage is the child's token usage (zero without a result).
func (o Outcome) Usage() message.ResultUsage {
	if o.Result == nil {
		return message.ResultUsage{}
	}
	return o.Result.Usage
}

// Tokens is the total of the child's input, output and cache tokens.
func (o Outcome) Tokens() int64 {
	u := o.Usage()
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Run takes prompt through child, the engine session of a subagent, and
// returns how it ended. emit receives what the parent's stream shows of a
// subagent, as the reference shows it: its tool calls and their results,
// its permission denials and the task messages of its own subagents; its
// text is handed back at the end instead. A run ended by the shared budget,
// or by ctx, counts as stopped.
func Run(ctx context.Context, child *engine.Session, prompt []model.Content, emit func(message.Message)) Outcome {
	return RunShowing(ctx, child, prompt, emit, false)
}

// RunShowing is Run; with text true, emit also receives the child's
// assistant messages of text and thinking (the reference's
// forwardSubagentText).
func RunShowing(ctx context.Context, child *engine.Session, prompt []model.Content, emit func(message.Message), text bool) Outcome {
	return runShowing(ctx, child, prompt, emit, text, nil)
}

// runShowing is RunShowing; progress, when set, is told of each tool call
// before the call's message is emitted (task_progress): the call, the
// tokens of the reply that made it, the calls so far and the time since
// the start.
func runShowing(ctx context.Context, child *engine.Session, prompt []model.Content, emit func(message.Message), text bool,
	progress func(call model.Content, tokens, toolUses int64, elapsed time.Duration)) Outcome {
	start := time.Now()
	var toolUses atomic.Int64
	res, err := child.Run(ctx, prompt, func(m message.Message) bool {
		switch m := m.(type) {
		case *message.Assistant:
			if len(m.Message.Content) > 0 && m.Message.Content[0].Type == model.TypeToolUse {
				n := toolUses.Add(1)
				if progress != nil {
					u := m.Message.Usage
					progress(m.Message.Content[0], u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens+u.OutputTokens,
						n, time.Since(start))
				}
				emit(m)
			} else if text && len(m.Message.Content) > 0 {
				emit(m)
			}
		case *message.User:
			// Once the run is stopped, its stopped results and marker go
			// to its own history only: the reference's stream shows
			// none of them.
			if ctx.Err() == nil {
				emit(m)
			}
		case *message.System:
			switch m.Subtype {
			case message.SubtypePermissionDenied, "task_started", "task_updated", "task_notification":
				emit(m)
			}
		}
		return true
	})
	o := Outcome{Result: res, Err: err, ToolUses: toolUses.Load(), Duration: time.Since(start)}
	o.Stopped = ctx.Err() != nil || errors.Is(err, context.Canceled) ||
		(res != nil && res.Subtype == message.ResultErrorMaxBudget)
	return o
}
