package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestAskUserQuestionInfo(t *testing.T) {
	// AskUserQuestion is not in the reference's tool_schemas.json; the file
	// follows sdk-surface.md E.2.
	sideCheckSchemas(t, "testdata/askuser/schema.json", AskUserQuestion())
	if AskUserQuestion().Info().ReadOnly {
		t.Error("AskUserQuestion is read-only")
	}
}

var askTestQuestions = []tool.Question{{
	Question: "Which database should the service use?",
	Header:   "Database",
	Options: []tool.QuestionOption{
		{Label: "PostgreSQL (Recommended)", Description: "Relational, already in use elsewhere."},
		{Label: "SQLite", Description: "A single file; no server.", Preview: "db, _ := sql.Open(\"sqlite\", \"app.db\")"},
	},
}, {
	Question:    "Which platforms must it run on?",
	Header:      "Platforms",
	MultiSelect: true,
	Options: []tool.QuestionOption{
		{Label: "Linux", Description: "Servers."},
		{Label: "macOS", Description: "Developer laptops."},
		{Label: "Windows", Description: "Some users."},
	},
}}

func TestAskUserQuestionResults(t *testing.T) {
	var asked [][]tool.Question
	answer := func(ans map[string]string, err error) tool.AskUserFunc {
		return func(ctx context.Context, qs []tool.Question) (map[string]string, error) {
			asked = append(asked, qs)
			return ans, err
		}
	}
	both := map[string]string{
		"Which database should the service use?": "SQLite",
		"Which platforms must it run on?":        "Linux, macOS",
	}
	tests := []struct {
		name  string
		ask   tool.AskUserFunc
		in    map[string]any
		want  sideOutcome
		asked bool
	}{{
		name: "answered",
		ask:  answer(both, nil),
		in:   map[string]any{"questions": askTestQuestions},
		want: sideOutcome{
			Text:       "The user answered:\n- Which database should the service use? → SQLite\n- Which platforms must it run on? → Linux, macOS\nGo on with these answers in mind.",
			Structured: AskUserQuestionResult{Questions: askTestQuestions, Answers: both},
		},
		asked: true,
	}, {
		name: "partly answered",
		ask:  answer(map[string]string{"Which platforms must it run on?": "Windows"}, nil),
		in:   map[string]any{"questions": askTestQuestions},
		want: sideOutcome{
			Text:       "The user answered:\n- Which database should the service use? → (no answer)\n- Which platforms must it run on? → Windows\nGo on with these answers in mind.",
			Structured: AskUserQuestionResult{Questions: askTestQuestions, Answers: map[string]string{"Which platforms must it run on?": "Windows"}},
		},
		asked: true,
	}, {
		name: "nothing answered",
		ask:  answer(nil, nil),
		in:   map[string]any{"questions": askTestQuestions[:1]},
		want: sideOutcome{
			Text:       "The user answered:\n- Which database should the service use? → (no answer)\nGo on with these answers in mind.",
			Structured: AskUserQuestionResult{Questions: askTestQuestions[:1], Answers: map[string]string{}},
		},
		asked: true,
	}, {
		name: "answers given with the input",
		in: map[string]any{"questions": askTestQuestions, "answers": both,
			"annotations": map[string]any{"Which platforms must it run on?": map[string]any{"notes": " Linux first. "}}},
		want: sideOutcome{
			Text: "The user answered:\n- Which database should the service use? → SQLite\n- Which platforms must it run on? → Linux, macOS\n  Notes from the user: Linux first.\nGo on with these answers in mind.",
			Structured: AskUserQuestionResult{Questions: askTestQuestions, Answers: both,
				Annotations: map[string]AskUserAnnotation{"Which platforms must it run on?": {Notes: " Linux first. "}}},
		},
	}, {
		name: "nobody to ask",
		in:   map[string]any{"questions": askTestQuestions},
		want: sideOutcome{IsError: true,
			Text: "No user is available to answer questions in this session. Do not ask again: decide for yourself, using sensible defaults, and say which assumptions you made."},
	}, {
		name: "asking fails",
		ask:  answer(nil, errors.New("the user closed the dialog")),
		in:   map[string]any{"questions": askTestQuestions},
		want: sideOutcome{IsError: true,
			Text: "The questions could not be put to the user: the user closed the dialog"},
		asked: true,
	}, {
		name: "header too long",
		ask:  answer(both, nil),
		in: map[string]any{"questions": []map[string]any{{"question": "Q?", "header": "Much too long a header",
			"options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}}}},
		want: sideOutcome{IsError: true,
			Text: `The header "Much too long a header" of question 1 is too long: headers are at most 12 characters.`},
	}, {
		name: "twelve characters with accents",
		ask:  answer(map[string]string{"Q?": "b"}, nil),
		in: map[string]any{"questions": []map[string]any{{"question": "Q?", "header": "Éléphantésqé",
			"options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}}}},
		want: sideOutcome{Text: "The user answered:\n- Q? → b\nGo on with these answers in mind.",
			Structured: AskUserQuestionResult{Questions: []tool.Question{{Question: "Q?", Header: "Éléphantésqé",
				Options: []tool.QuestionOption{{Label: "a"}, {Label: "b"}}}}, Answers: map[string]string{"Q?": "b"}}},
		asked: true,
	}, {
		name: "empty header",
		in: map[string]any{"questions": []map[string]any{{"question": "Q?", "header": " ",
			"options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}}}},
		want: sideOutcome{IsError: true,
			Text: "The header of question 1 is empty: give a short label of at most 12 characters."},
	}, {
		name: "empty question",
		in: map[string]any{"questions": []map[string]any{{"question": "", "header": "H",
			"options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}}}},
		want: sideOutcome{IsError: true, Text: "The text of question 1 is empty."},
	}, {
		name: "same question twice",
		in: map[string]any{"questions": []map[string]any{
			{"question": "Q?", "header": "H", "options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}},
			{"question": "Q?", "header": "H2", "options": []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}},
		}},
		want: sideOutcome{IsError: true, Text: `Two questions read "Q?": each question must be different.`},
	}, {
		name: "same label twice",
		in: map[string]any{"questions": []map[string]any{{"question": "Q?", "header": "H",
			"options": []map[string]any{{"label": "a", "description": "1"}, {"label": "a", "description": "2"}}}}},
		want: sideOutcome{IsError: true, Text: `Two options of question 1 are labelled "a": each option must be different.`},
	}, {
		name: "empty label",
		in: map[string]any{"questions": []map[string]any{{"question": "Q?", "header": "H",
			"options": []map[string]any{{"label": "", "description": "1"}, {"label": "a", "description": "2"}}}}},
		want: sideOutcome{IsError: true, Text: "An option of question 1 has an empty label."},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			env := &tool.Env{AskUser: tc.ask}
			got := sideOutcomeOf(sideRun(t, context.Background(), AskUserQuestion(), env, tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if (len(asked) > 0) != tc.asked {
				t.Errorf("asked %d times, want asked=%v", len(asked), tc.asked)
			}
			if tc.asked && len(asked) == 1 {
				if _, ok := tc.in["questions"].([]tool.Question); ok {
					if diff := cmp.Diff(tc.in["questions"], asked[0]); diff != "" {
						t.Errorf("questions asked (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

func TestAskUserQuestionSchemaLimits(t *testing.T) {
	opts := []map[string]any{{"label": "a", "description": ""}, {"label": "b", "description": ""}}
	q := map[string]any{"question": "Q?", "header": "H", "options": opts}
	for name, in := range map[string]map[string]any{
		"no questions":    {"questions": []any{}},
		"five questions":  {"questions": []any{q, q, q, q, q}},
		"one option":      {"questions": []any{map[string]any{"question": "Q?", "header": "H", "options": opts[:1]}}},
		"five options":    {"questions": []any{map[string]any{"question": "Q?", "header": "H", "options": []any{opts[0], opts[1], opts[0], opts[1], opts[0]}}}},
		"no header":       {"questions": []any{map[string]any{"question": "Q?", "options": opts}}},
		"unknown field":   {"questions": []any{q}, "other": 1},
		"option no label": {"questions": []any{map[string]any{"question": "Q?", "header": "H", "options": []any{map[string]any{"description": ""}, opts[1]}}}},
	} {
		t.Run(name, func(t *testing.T) {
			called := false
			env := &tool.Env{AskUser: func(context.Context, []tool.Question) (map[string]string, error) {
				called = true
				return nil, nil
			}}
			r := sideRun(t, context.Background(), AskUserQuestion(), env, in)
			if !r.IsError || !strings.HasPrefix(r.Text(), "InputValidationError: AskUserQuestion failed") {
				t.Errorf("not refused by the schema: %+v", r)
			}
			if called {
				t.Error("the user was asked")
			}
		})
	}
}

func TestAskUserQuestionCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	env := &tool.Env{AskUser: func(ctx context.Context, _ []tool.Question) (map[string]string, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	_, err := AskUserQuestion().Run(ctx, &tool.Call{Input: []byte(`{"questions":[{"question":"Q?","header":"H","options":[{"label":"a","description":""},{"label":"b","description":""}]}]}`), Env: env})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
