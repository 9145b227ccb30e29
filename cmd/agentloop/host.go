package main

import (
	"context"
	"encoding/json"
	"errors"
)

// hostCaller sends control requests from the engine to the host that
// spawned it (the SDK, over stdout) and waits for the host's answers (on
// stdin): can_use_tool, hook_callback, mcp_message. The stream-json
// driver implements it; the bridges (permission, hooks, in-process MCP
// servers) use it.
//
// Call writes {"type":"control_request","request_id":…,"request":body}
// where body is subtype plus the members of req (a struct or map that
// encodes to a JSON object), and returns the "response" member of the
// matching success control_response. An error control_response is a
// *hostError. When ctx ends first, Call sends a control_cancel_request
// for the id and returns ctx's error. It is safe for concurrent use.
type hostCaller interface {
	Call(ctx context.Context, subtype string, req any) (json.RawMessage, error)
}

// hostError is the host's error answer to a control request.
type hostError struct {
	Subtype string // the request's subtype
	Message string // the answer's "error"
	Code    string // the answer's "error_code", if any
}

func (e *hostError) Error() string {
	return "host answered " + e.Subtype + " with an error: " + e.Message
}

// errHostGone is returned by Call once the host's input has ended (stdin
// closed) or the driver stopped: no answer can come.
var errHostGone = errors.New("the host closed its input; no answer can come")
