package observe_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/observe"
)

type withContent struct{ c observe.Content }

func (w withContent) Start(ctx context.Context, _ observe.Start) (context.Context, observe.Span) {
	return ctx, nil
}

func (w withContent) Content() observe.Content { return w.c }

type plain struct{}

func (plain) Start(ctx context.Context, _ observe.Start) (context.Context, observe.Span) {
	return ctx, nil
}

func TestContentOf(t *testing.T) {
	for _, c := range []struct {
		name string
		o    observe.Observer
		want observe.Content
	}{
		{"nil", nil, observe.Content{}},
		{"no policy", plain{}, observe.Content{}},
		{"prompts", withContent{observe.Content{UserPrompts: true}}, observe.Content{UserPrompts: true}},
		{"tools", withContent{observe.Content{ToolDetails: true}}, observe.Content{ToolDetails: true}},
	} {
		if got := observe.ContentOf(c.o); got != c.want {
			t.Errorf("%s: ContentOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[observe.Kind]string{
		observe.KindSession: "session", observe.KindTurn: "turn", observe.KindModel: "model", observe.KindTool: "tool",
		observe.KindHook: "hook", observe.KindCompaction: "compaction", observe.KindSubagent: "subagent",
		0: "unknown", 99: "unknown",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}
