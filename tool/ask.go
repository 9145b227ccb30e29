package tool

import "context"

// Question is one question the model asks the user through the
// AskUserQuestion tool.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// QuestionOption is one answer the user may choose.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Preview     string `json:"preview,omitempty"`
}

// AskUserFunc asks the user questions and returns the answers, keyed by
// question text (for multi-select questions, the chosen labels joined with
// ", "). It may block until the user answers; it must return when ctx is
// done.
type AskUserFunc func(ctx context.Context, questions []Question) (map[string]string, error)
