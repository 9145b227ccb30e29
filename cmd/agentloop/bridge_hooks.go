package main

// For the driver (h8): hookBridge has the signature of the brief,
// reg being wire.InitializeRequest.Hooks as decoded.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/google/uuid"
)

// hookBridge turns the host's hook registration (initialize's hooks: for
// each event, matchers with callback ids) into Go hook callbacks. Each id
// becomes a hooks.Callback that sends hook_callback {callback_id, input,
// tool_use_id} and reads the answer as the hook's JSON output (the
// HookJSONOutput a command hook prints); the engine matches the matchers
// itself, as the reference does. tool_use_id is the tool call's id for
// tool events and a fresh UUID otherwise. A matcher's timeout (seconds)
// bounds each of its callbacks; without one the event's default applies.
//
// A callback the host answers with an error, or with something that is
// not a JSON object of that shape, counts as an empty answer and is
// reported as a failed host callback (an *agentloop.HookCallbackError:
// the session's hook_callback_failed diagnostic, the reference's tag);
// with onFailure "block" it blocks the event's action instead (except for
// Stop and SubagentStop, as in the reference). A host that is gone counts
// as a failure too.
//
// It fails, naming them, on event names agentloop does not dispatch, on
// an onFailure other than continue or block, on a negative or non-finite
// timeout, and on a matcher with no callback ids. Members of a matcher it
// does not honour (contextOnly, whenUnanswered, …) are reported.
func hookBridge(h hostCaller, reg map[string][]wire.HookMatcher) (map[hooks.Event][]hooks.Matcher, error) {
	if len(reg) == 0 {
		return nil, nil
	}
	var unknown []string
	for name := range reg {
		if !slices.Contains(hooks.Events, hooks.Event(name)) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("hooks: agentloop does not dispatch the event(s) %s", strings.Join(unknown, ", "))
	}
	names := make([]string, 0, len(reg))
	for name := range reg {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[hooks.Event][]hooks.Matcher{}
	for _, name := range names {
		ev := hooks.Event(name)
		for i, m := range reg[name] {
			where := fmt.Sprintf("hooks.%s[%d]", name, i)
			if len(m.HookCallbackIDs) == 0 {
				return nil, fmt.Errorf("%s: no hookCallbackIds", where)
			}
			var timeout time.Duration
			if m.Timeout != nil {
				s := *m.Timeout
				if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
					return nil, fmt.Errorf("%s: timeout %v is not a number of seconds", where, s)
				}
				timeout = time.Duration(s * float64(time.Second))
			}
			block := false
			switch m.OnFailure {
			case "", "continue":
			case "block":
				block = ev != hooks.Stop && ev != hooks.SubagentStop
			default:
				return nil, fmt.Errorf("%s: onFailure %q is not continue or block", where, m.OnFailure)
			}
			extra := make([]string, 0, len(m.Extra))
			for k := range m.Extra {
				extra = append(extra, k)
			}
			sort.Strings(extra)
			for _, k := range extra {
				report(h, agentloop.DiagHook, fmt.Sprintf("%s: the member %q of the host's hook registration is not honoured.", where, k))
			}
			hm := hooks.Matcher{Matcher: m.Matcher, Timeout: timeout}
			for _, id := range m.HookCallbackIDs {
				if id == "" {
					return nil, fmt.Errorf("%s: an empty callback id", where)
				}
				hm.Hooks = append(hm.Hooks, hostHook(h, ev, id, block))
			}
			out[ev] = append(out[ev], hm)
		}
	}
	return out, nil
}

// hostHook is the callback of one registered id.
func hostHook(h hostCaller, ev hooks.Event, id string, block bool) hooks.Callback {
	return func(ctx context.Context, in hooks.Input, toolUseID string) (hooks.Output, error) {
		input, err := json.Marshal(in)
		if err != nil {
			return hooks.Output{}, fmt.Errorf("hook callback %s: encoding the input: %w", id, err)
		}
		if toolUseID == "" {
			toolUseID = uuid.NewString()
		}
		raw, err := h.Call(ctx, "hook_callback", &wire.HookCallbackRequest{CallbackID: id, Input: input, ToolUseID: toolUseID})
		if err != nil {
			if ctx.Err() != nil {
				// Timed out or cancelled: the dispatcher says which.
				return hooks.Output{}, ctx.Err()
			}
			var he *hostError
			what := "could not be reached"
			if errors.As(err, &he) {
				what = "answered with an error"
			}
			return failedHook(id, fmt.Sprintf("the host %s (%v)", what, err), block)
		}
		out, err := decodeHookAnswer(raw)
		if err != nil {
			return failedHook(id, fmt.Sprintf("the host's answer is not hook output (%v)", err), block)
		}
		return out, nil
	}
}

// failedHook is the result of a callback the host did not answer usably:
// an error (an empty answer, reported) or, with onFailure block, a
// blocking answer.
func failedHook(id, why string, block bool) (hooks.Output, error) {
	text := fmt.Sprintf("Hook callback %s failed: %s.", id, why)
	if block {
		return hooks.Output{Decision: "block", Reason: text + " Its registration blocks on failure."}, nil
	}
	return hooks.Output{}, &agentloop.HookCallbackError{Err: errors.New(text + " Its answer was treated as empty.")}
}

// decodeHookAnswer reads a hook_callback answer: a JSON object in the
// hook output format (unknown members are ignored, as for command hooks;
// a known member of the wrong type is an error). The dispatcher checks
// the values for the event.
func decodeHookAnswer(raw json.RawMessage) (hooks.Output, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || b[0] != '{' {
		return hooks.Output{}, errors.New("not a JSON object")
	}
	var out hooks.Output
	if err := json.Unmarshal(b, &out); err != nil {
		return hooks.Output{}, err
	}
	return out, nil
}
