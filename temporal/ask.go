package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop"
)

// UpdatePermission is the Update through which a client answers a
// permission request of its session (see Ask).
const UpdatePermission = "agentloop.permission"

// Ask is a permission request waiting for the client: the session's rules
// and mode did not decide the call, and the client's CanUseTool is to
// answer it. It waits in the workflow's state, so it survives the worker
// that asked.
type Ask struct {
	ID      string                      `json:"id"` // the tool_use id
	Request agentloop.PermissionRequest `json:"request"`
}

// PermissionAnswer is the argument of UpdatePermission.
type PermissionAnswer struct {
	ID     string                     `json:"id"`
	Result agentloop.PermissionResult `json:"result"`
}

// askSlot carries, through the context of one Authorize activity, the
// client's answer when it has one, and the request when the check needs
// one.
type askSlot struct {
	answer *agentloop.PermissionResult
	asked  *agentloop.PermissionRequest
}

type askKey struct{}

// askClient is the CanUseTool of a worker session whose client answers
// permission requests: with the client's answer in the context it returns
// it; without, it records the request and denies, and the Authorize
// activity turns that into an Ask for the workflow.
func askClient(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
	slot, _ := ctx.Value(askKey{}).(*askSlot)
	if slot == nil {
		return agentloop.PermissionResult{}, fmt.Errorf("agentloop/temporal: a permission request outside an Authorize activity")
	}
	if slot.answer != nil {
		res := *slot.answer
		if string(res.UpdatedInput) == "null" {
			// A nil input came through JSON as the literal null.
			res.UpdatedInput = nil
		}
		return res, nil
	}
	slot.asked = &req
	return agentloop.Deny("waiting for the client's answer"), nil
}

// AuthorizeOutcome is the Authorize activity's result: a decision, or a
// request for the client.
type AuthorizeOutcome struct {
	Decision json.RawMessage `json:"decision,omitempty"` // an engine.Decision
	Ask      *Ask            `json:"ask,omitempty"`
}
