package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// ClassifierModel is the model that judges tool calls in auto permission
// mode.
const ClassifierModel = "haiku"

// modelClassifier decides auto-mode calls with a model call through the
// session's provider. Its cost counts towards the session's.
type modelClassifier struct{ s *Session }

func (c modelClassifier) Classify(ctx context.Context, req permission.ClassifyRequest) (permission.ClassifierResult, error) {
	action, _ := json.Marshal(map[string]any{"tool": req.Tool, "input": req.Input, "working_directories": req.Dirs,
		"why_it_needs_review": req.Reason})
	m := pricing.Resolve(ClassifierModel)
	if err := c.s.helperModelAllowed(m, "the auto-mode classifier's model"); err != nil { // managed_policy.go
		// Undecided: the call is asked, as when the classifier fails.
		return permission.ClassifierResult{}, fmt.Errorf("permission classifier: %w", err)
	}
	resp, err := c.s.env.Provider.Stream(ctx, &model.Request{
		Model:     m,
		MaxTokens: 256,
		Stream:    true,
		System:    []model.Content{model.TextBlock(classifierSystem(c.s.autoMode))}, // classifier_rules.go
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(string(action))}}},
	}, model.NopHandler{})
	if err != nil {
		return permission.ClassifierResult{}, fmt.Errorf("permission classifier: %w", err)
	}
	c.s.engine().AddUsage(resp.Model, resp.Usage)
	return parseVerdict(resp.Text()), nil
}

// parseVerdict reads the classifier's JSON line; anything else means it
// could not decide.
func parseVerdict(text string) permission.ClassifierResult {
	text = strings.TrimSpace(text)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if json.Unmarshal([]byte(text), &v) != nil {
		return permission.ClassifierResult{}
	}
	switch v.Decision {
	case string(vocab.Allow):
		return permission.ClassifierResult{Behavior: permission.Allow, Reason: v.Reason}
	case string(vocab.Deny):
		return permission.ClassifierResult{Behavior: permission.Deny, Reason: v.Reason}
	}
	return permission.ClassifierResult{}
}
