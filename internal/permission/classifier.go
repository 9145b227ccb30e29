package permission

import (
	"context"
	"encoding/json"
)

// Classifier decides, in auto mode, the calls that would otherwise be put
// to a person. The loop implements it with a model call. Calls that an ask
// rule, a safety check (protected or critical paths, network paths) or a
// tool's need for a person routes to a prompt never reach it.
type Classifier interface {
	Classify(ctx context.Context, req ClassifyRequest) (ClassifierResult, error)
}

// ClassifyRequest is what the classifier is asked about.
type ClassifyRequest struct {
	Tool   string          // canonical tool name
	Input  json.RawMessage // the call's input
	Cwd    string          // the call's working directory ("" = the session's)
	Dirs   []string        // the working directories
	Reason string          // why the call would be asked
}

// ClassifierResult is the classifier's answer: Allow or Deny, with a
// reason for the model; any other Behavior (or an error) means it could
// not decide, and the call is asked.
type ClassifierResult struct {
	Behavior Behavior
	Reason   string
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(ctx context.Context, req ClassifyRequest) (ClassifierResult, error)

// Classify calls f.
func (f ClassifierFunc) Classify(ctx context.Context, req ClassifyRequest) (ClassifierResult, error) {
	return f(ctx, req)
}
