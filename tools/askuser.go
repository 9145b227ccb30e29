package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/tool"
)

//go:embed askuserquestion.md
var askUserDescription string

const askUserSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "questions": {
      "description": "The questions to ask, one to four of them.",
      "type": "array",
      "minItems": 1,
      "maxItems": 4,
      "items": {
        "type": "object",
        "properties": {
          "question": {"description": "The full question, ending with a question mark.", "type": "string"},
          "header": {"description": "A very short label for the question, at most 12 characters (for example \"Database\").", "type": "string"},
          "options": {
            "description": "The answers to choose from, two to four of them. The user can always give an answer of their own instead.",
            "type": "array",
            "minItems": 2,
            "maxItems": 4,
            "items": {
              "type": "object",
              "properties": {
                "label": {"description": "The answer as the user picks it: a few words.", "type": "string"},
                "description": {"description": "What choosing this answer means, or what follows from it.", "type": "string"},
                "preview": {"description": "Optional content to show beside the option, such as a code snippet or a mock-up.", "type": "string"}
              },
              "required": ["label", "description"],
              "additionalProperties": false
            }
          },
          "multiSelect": {"description": "Set to true when the user may pick several options.", "type": "boolean", "default": false}
        },
        "required": ["question", "header", "options"],
        "additionalProperties": false
      }
    },
    "answers": {"description": "Filled in by the application with the user's answers; do not set it yourself.", "type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"description": "Filled in by the application; do not set it yourself.", "type": "object", "additionalProperties": {"type": "object", "properties": {"preview": {"type": "string"}, "notes": {"type": "string"}}, "additionalProperties": false}},
    "metadata": {"description": "Optional tracking data, not shown to the user.", "type": "object", "properties": {"source": {"type": "string"}}, "additionalProperties": false}
  },
  "required": ["questions"],
  "additionalProperties": false
}`

// askUserMaxHeader is the longest header, in characters.
const askUserMaxHeader = 12

type askUserInput struct {
	Questions   []tool.Question              `json:"questions"`
	Answers     map[string]string            `json:"answers,omitempty"`
	Annotations map[string]AskUserAnnotation `json:"annotations,omitempty"`
	Metadata    map[string]string            `json:"metadata,omitempty"`
}

// AskUserAnnotation is what the user added to a question besides the answer.
type AskUserAnnotation struct {
	Preview string `json:"preview,omitempty"`
	Notes   string `json:"notes,omitempty"`
}

// AskUserQuestionResult is the tool_use_result of an AskUserQuestion call.
// Answers maps each question's text to the answer (the labels chosen,
// joined by ", ", for multi-select questions).
type AskUserQuestionResult struct {
	Questions   []tool.Question              `json:"questions"`
	Answers     map[string]string            `json:"answers"`
	Annotations map[string]AskUserAnnotation `json:"annotations,omitempty"`
}

// AskUserQuestion returns the AskUserQuestion tool, which puts multiple-choice
// questions to the user through the session's tool.Env.AskUser callback and
// reports the answers. When the call's input already carries answers (a
// host may fill them in when it approves the call), they are used without
// asking again. Without a callback, the call fails: nobody can answer.
func AskUserQuestion() tool.Tool {
	return tool.New("AskUserQuestion", askUserDescription, runAskUser, &tool.Options{
		Schema: json.RawMessage(askUserSchema),
	})
}

func runAskUser(ctx context.Context, in askUserInput, call *tool.Call) (tool.Result, error) {
	if msg := askUserCheck(in.Questions); msg != "" {
		return tool.Error(msg), nil
	}
	answers := in.Answers
	if len(answers) == 0 {
		ask := call.Env.AskUser
		if ask == nil {
			return tool.Error("No user is available to answer questions in this session. Do not ask again: decide for yourself, using sensible defaults, and say which assumptions you made."), nil
		}
		got, err := ask(ctx, in.Questions)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Error(fmt.Sprintf("The questions could not be put to the user: %v", err)), nil
		}
		answers = got
	}
	if answers == nil {
		answers = map[string]string{}
	}

	var b strings.Builder
	b.WriteString("The user answered:\n")
	for _, q := range in.Questions {
		a, ok := answers[q.Question]
		if !ok || strings.TrimSpace(a) == "" {
			a = "(no answer)"
		}
		fmt.Fprintf(&b, "- %s → %s\n", q.Question, a)
		if n := strings.TrimSpace(in.Annotations[q.Question].Notes); n != "" {
			fmt.Fprintf(&b, "  Notes from the user: %s\n", n)
		}
	}
	b.WriteString("Go on with these answers in mind.")
	r := tool.Text(b.String())
	r.Structured = AskUserQuestionResult{Questions: in.Questions, Answers: answers, Annotations: in.Annotations}
	return r, nil
}

// askUserCheck returns what is wrong with the questions, or "".
func askUserCheck(qs []tool.Question) string {
	seen := map[string]bool{}
	for i, q := range qs {
		name := fmt.Sprintf("question %d", i+1)
		switch {
		case strings.TrimSpace(q.Question) == "":
			return fmt.Sprintf("The text of %s is empty.", name)
		case seen[q.Question]:
			return fmt.Sprintf("Two questions read %q: each question must be different.", q.Question)
		case strings.TrimSpace(q.Header) == "":
			return fmt.Sprintf("The header of %s is empty: give a short label of at most %d characters.", name, askUserMaxHeader)
		case utf8.RuneCountInString(q.Header) > askUserMaxHeader:
			return fmt.Sprintf("The header %q of %s is too long: headers are at most %d characters.", q.Header, name, askUserMaxHeader)
		}
		seen[q.Question] = true
		labels := map[string]bool{}
		for _, o := range q.Options {
			switch {
			case strings.TrimSpace(o.Label) == "":
				return fmt.Sprintf("An option of %s has an empty label.", name)
			case labels[o.Label]:
				return fmt.Sprintf("Two options of %s are labelled %q: each option must be different.", name, o.Label)
			}
			labels[o.Label] = true
		}
	}
	return ""
}
