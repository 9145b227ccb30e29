package hooks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReportErrorCause: Config.ReportError gets each hook error with the
// error a Go callback returned (so errors.Is finds it), and nil for a
// failure that is not a callback's error (here a timeout); Report is not
// called when ReportError is set.
func TestReportErrorCause(t *testing.T) {
	marker := errors.New("marker")
	type report struct {
		Callback int // which callback the text names
		Marked   bool
		Nil      bool
	}
	var (
		mu  sync.Mutex
		got []report
	)
	cfg := Config{
		Callbacks: map[Event][]Matcher{UserPromptSubmit: {
			{Hooks: []Callback{func(context.Context, Input, string) (Output, error) {
				return Output{}, errors.Join(errors.New("failed"), marker)
			}}},
			{Timeout: 10 * time.Millisecond, Hooks: []Callback{func(ctx context.Context, _ Input, _ string) (Output, error) {
				<-ctx.Done()
				return Output{}, ctx.Err()
			}}},
		}},
		Report: func(string) { t.Error("Report called although ReportError is set") },
		ReportError: func(text string, cause error) {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			if !strings.Contains(text, "callback 0") {
				n = 1
			}
			got = append(got, report{Callback: n, Marked: errors.Is(cause, marker), Nil: cause == nil})
		},
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.UserPromptSubmit(context.Background(), UserPromptSubmitInput{Prompt: "hi"})
	want := []report{{Callback: 0, Marked: true}, {Callback: 1, Nil: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}
