package temporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// smokeTaskQueue is the task queue the smoke workflow's workers poll.
const smokeTaskQueue = "agentloop-smoke"

// approveUpdate is the name of the Update that SmokeWorkflow waits for.
const approveUpdate = "approve"

// Greet is the smoke test's only activity.
func Greet(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

// SmokeWorkflow calls Greet once, then waits for one approveUpdate and
// returns both results joined. The Update's validator rejects an empty note,
// and its handler returns "ok:"+note to the caller.
//
// The replay test pins this workflow's history in testdata/: any change to
// the commands it issues, or to their order, must fail that test.
func SmokeWorkflow(ctx workflow.Context, name string) (string, error) {
	var note string
	approved := false
	err := workflow.SetUpdateHandlerWithOptions(ctx, approveUpdate,
		func(_ workflow.Context, n string) (string, error) {
			note, approved = n, true
			return "ok:" + n, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, n string) error {
			if n == "" {
				return errors.New("empty note")
			}
			return nil
		}})
	if err != nil {
		return "", err
	}

	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var greeting string
	if err := workflow.ExecuteActivity(ctx, Greet, name).Get(ctx, &greeting); err != nil {
		return "", err
	}
	if err := workflow.Await(ctx, func() bool { return approved }); err != nil {
		return "", err
	}
	return greeting + "; " + note, nil
}
