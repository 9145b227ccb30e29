package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"go.temporal.io/sdk/workflow"
)

// The workflow side of the loop's effects: each proxy turns one effect into
// an activity and blocks the coroutine that asked (w.cur) until it is done.
// The context.Context the loop passes is not used: cancellation reaches
// activities through the workflow's own context.

// ModelCall is the input of the CallModel activity.
type ModelCall struct {
	Session SessionInput   `json:"session"`
	Request *model.Request `json:"request"`
	// Partial asks for the reply's stream events, signalled to the
	// workflow as they arrive (SignalPartial).
	Partial bool `json:"partial,omitempty"`
}

// ToolRun is the input of the RunTool activity.
type ToolRun struct {
	Session  SessionInput    `json:"session"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	ReadOnly bool            `json:"readOnly"`
}

// ModelReply is the CallModel activity's result: the reply, and how many
// stream events it signalled (SignalPartial) before it returned.
type ModelReply struct {
	Response *model.Response `json:"response"`
	Events   int             `json:"events,omitempty"`
}

// AuthorizeCall is the input of the Authorize activity.
type AuthorizeCall struct {
	Session SessionInput    `json:"session"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Alone   bool            `json:"alone"`
	// Answer is the client's answer to the call's Ask, when it has one.
	Answer *agentloop.PermissionResult `json:"answer,omitempty"`
}

// modelProxy is the loop's model.Provider: one CallModel activity per
// request. The reply comes back whole; its stream is the worker's.
type modelProxy struct{ w *wf }

func (p *modelProxy) Stream(_ context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	ctx := workflow.WithActivityOptions(p.w.cur, modelOptions)
	p.w.partialSeen = 0
	var reply ModelReply
	if err := workflow.ExecuteActivity(ctx, actCallModel, ModelCall{Session: p.w.session(), Request: req, Partial: p.w.partial}).Get(ctx, &reply); err != nil {
		return nil, fmt.Errorf("model call: %w", err)
	}
	p.w.awaitPartials(reply.Events)
	if reply.Response == nil {
		return nil, fmt.Errorf("model call: no reply")
	}
	return reply.Response, nil
}

// toolProxy is one of the session's tools as the loop sees it: its Info
// from the worker, its calls run by the RunTool activity.
type toolProxy struct {
	w    *wf
	info tool.Info
}

func (t *toolProxy) Info() tool.Info { return t.info }

func (t *toolProxy) Run(_ context.Context, call *tool.Call) (tool.Result, error) {
	opts := writeToolOptions
	if t.info.ReadOnly {
		opts = readToolOptions
	}
	ctx := workflow.WithActivityOptions(t.w.cur, opts)
	var res tool.Result
	in := ToolRun{Session: t.w.session(), ID: call.ID, Name: t.info.Name, Input: call.Input, ReadOnly: t.info.ReadOnly}
	if err := workflow.ExecuteActivity(ctx, actRunTool, in).Get(ctx, &res); err != nil {
		return tool.Result{}, fmt.Errorf("the call could not be carried out: %w", err)
	}
	return res, nil
}

// authorize is the loop's Authorizer: the worker's permission check
// (rules, mode, hooks, CanUseTool), one Authorize activity per call, so
// the decision is in the history before the call runs. When the client is
// to answer, the request waits in the workflow (an Ask, read by Query)
// until UpdatePermission brings the answer, and the check runs again with
// it.
func (w *wf) authorize(_ context.Context, call *engine.ToolCall) engine.Decision {
	in := AuthorizeCall{Session: w.session(), ID: call.ID, Name: call.Name, Input: call.Input, Alone: call.Alone}
	for {
		ctx := workflow.WithActivityOptions(w.cur, authorizeOptions)
		var out AuthorizeOutcome
		if err := workflow.ExecuteActivity(ctx, actAuthorize, in).Get(ctx, &out); err != nil {
			return engine.Decision{Message: "The permission check could not be made: " + err.Error(), Source: "config", ReasonType: "other"}
		}
		if out.Ask == nil || in.Answer != nil {
			var d engine.Decision
			if err := json.Unmarshal(out.Decision, &d); err != nil {
				return engine.Decision{Message: "The permission check gave no decision: " + err.Error(), Source: "config", ReasonType: "other"}
			}
			return d
		}
		w.asks = append(w.asks, *out.Ask)
		if err := workflow.Await(w.cur, func() bool { _, ok := w.answers[call.ID]; return ok }); err != nil {
			return engine.Decision{Message: "The run was stopped while the permission request waited: " + err.Error(),
				Source: "config", ReasonType: "other", Interrupt: true}
		}
		answer := w.answers[call.ID]
		in.Answer = &answer
		w.asks = slices.DeleteFunc(w.asks, func(a Ask) bool { return a.ID == call.ID })
	}
}
