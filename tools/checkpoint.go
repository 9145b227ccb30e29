package tools

import (
	"fmt"

	"github.com/agentloop/agentloop/tool"
)

// beforeChange lets the session save the prior state of the file a call
// is about to change (tool.Env.BeforeFileChange). ok is false when the
// state could not be saved; r then tells the model the file was left
// alone.
func beforeChange(call *tool.Call, t fileTarget) (r tool.Result, ok bool) {
	if call == nil || call.Env == nil || call.Env.BeforeFileChange == nil {
		return tool.Result{}, true
	}
	if err := call.Env.BeforeFileChange(t.io); err != nil {
		return tool.Error(fmt.Sprintf("Cannot change %s: its checkpoint could not be saved, so the file was not touched: %v", t.path, err)), false
	}
	return tool.Result{}, true
}
