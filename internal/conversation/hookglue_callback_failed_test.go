package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/google/go-cmp/cmp"
)

// TestHookCallbackFailedTag: a Go callback's error is reported with the
// tag hook_failed, unless it is (or wraps) a *HookCallbackError, the
// failure of a host's callback, which is reported as hook_callback_failed,
// the reference's tag. A nil Err still has a text.
func TestHookCallbackFailedTag(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want []string // tags of the diagnostics that name the failure
	}{
		{"plain error", errors.New("went wrong"), []string{agentloop.DiagHookFailed}},
		{"host callback", &agentloop.HookCallbackError{Err: errors.New("went wrong")}, []string{agentloop.DiagHookCallbackFailed}},
		{"wrapped host callback", fmt.Errorf("bridge: %w", &agentloop.HookCallbackError{Err: errors.New("went wrong")}),
			[]string{agentloop.DiagHookCallbackFailed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{
				func(context.Context, hooks.Input, string) (hooks.Output, error) { return hooks.Output{}, tc.err }}}}}
			_, msgs, _ := hookRun(t, h, nil, agentlooptest.Text("done"))
			var tags []string
			for _, m := range msgs {
				if d, ok := agentloop.DiagnosticOf(m); ok && containsAny([]string{d.Text}, "went wrong") {
					tags = append(tags, d.Tag)
				}
			}
			if diff := cmp.Diff(tc.want, tags); diff != "" {
				t.Errorf("tags of the failure's diagnostics (-want +got):\n%s", diff)
			}
		})
	}
	if got := (&agentloop.HookCallbackError{}).Error(); got == "" {
		t.Error("a HookCallbackError without Err has no text")
	}
}
