package lineage

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/google/go-cmp/cmp"
)

func TestBudget(t *testing.T) {
	tests := []struct {
		name      string
		cap       float64
		before    []float64 // charged before StartRun
		charges   []float64
		wantOver  bool
		wantSpent float64
	}{
		{name: "no cap", cap: 0, charges: []float64{100}, wantSpent: 100},
		{name: "under", cap: 1, charges: []float64{0.25, 0.5}, wantSpent: 0.75},
		{name: "exactly at the cap", cap: 1, charges: []float64{0.5, 0.5}, wantOver: true, wantSpent: 1},
		{name: "over", cap: 1, charges: []float64{1.6}, wantOver: true, wantSpent: 1.6},
		{name: "counts from the run's start", cap: 1, before: []float64{5}, charges: []float64{0.5}, wantSpent: 0.5},
		{name: "NaN counts as spent", cap: 1, charges: []float64{math.NaN()}, wantOver: true, wantSpent: math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(Config{MaxBudgetUSD: tt.cap})
			for _, c := range tt.before {
				l.Charge(c)
			}
			l.StartRun()
			for _, c := range tt.charges {
				l.Charge(c)
			}
			capUSD, over := l.Exhausted()
			if capUSD != tt.cap || over != tt.wantOver {
				t.Errorf("Exhausted() = %v, %v; want %v, %v", capUSD, over, tt.cap, tt.wantOver)
			}
			if got := l.Spent(); !(got == tt.wantSpent || math.IsNaN(got) && math.IsNaN(tt.wantSpent)) {
				t.Errorf("Spent() = %v, want %v", got, tt.wantSpent)
			}
			if refusal := l.SpawnRefusal(); (refusal != "") != tt.wantOver {
				t.Errorf("SpawnRefusal() = %q with over %v", refusal, tt.wantOver)
			}
		})
	}
}

func TestSpawnRefusalWording(t *testing.T) {
	l := New(Config{MaxBudgetUSD: 1})
	l.StartRun()
	l.Charge(1.6123456)
	got := l.SpawnRefusal()
	if !strings.HasPrefix(got, "Budget limit reached ($1.6123 spent of the $1 maximum).") {
		t.Errorf("refusal = %q", got)
	}
}

// TestChargeConcurrent charges from many goroutines: no cost is lost.
func TestChargeConcurrent(t *testing.T) {
	l := New(Config{MaxBudgetUSD: 1000})
	l.StartRun()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				l.Charge(0.125)
			}
		}()
	}
	wg.Wait()
	if got := l.Spent(); got != 625 {
		t.Errorf("Spent() = %v, want 625", got)
	}
}

func TestChildTurnLimit(t *testing.T) {
	l := New(Config{})
	tests := []struct {
		name      string
		parent    Agent
		defTurns  int
		wantTurns int
	}{
		{name: "nothing set: the default", parent: Agent{}, wantTurns: DefaultSubagentMaxTurns},
		{name: "definition", parent: Agent{}, defTurns: 7, wantTurns: 7},
		{name: "parent's limit binds", parent: Agent{MaxTurns: 3}, wantTurns: 3},
		{name: "smaller of both", parent: Agent{MaxTurns: 3}, defTurns: 10, wantTurns: 3},
		{name: "definition below parent", parent: Agent{MaxTurns: 30}, defTurns: 10, wantTurns: 10},
		{name: "nested", parent: Agent{ID: "a1", Depth: 1, MaxTurns: DefaultSubagentMaxTurns}, wantTurns: DefaultSubagentMaxTurns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.Child(tt.parent, "a2", "x", tt.defTurns)
			want := Agent{ID: "a2", Type: "x", Depth: tt.parent.Depth + 1, MaxTurns: tt.wantTurns}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Child (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubagentTools(t *testing.T) {
	l := New(Config{DisallowedTools: []string{"Bash", "Write(/etc/**)", "Task"}})
	parent := []string{"Agent", "Read", "Bash", "Edit", "AskUserQuestion", "mytool"}
	tests := []struct {
		name               string
		parent             []string
		requested, removed []string
		want               []string
	}{
		{name: "all of the parent's", parent: parent, want: []string{"Read", "Edit", "mytool"}},
		{name: "a definition cannot add what the parent lacks", parent: []string{"Read"}, requested: []string{"Read", "Write", "Edit"},
			want: []string{"Read"}},
		{name: "a definition cannot bring back a disallowed tool", parent: parent, requested: []string{"Bash", "Read"},
			want: []string{"Read"}},
		{name: "definition removes", parent: parent, removed: []string{"Edit"}, want: []string{"Read", "mytool"}},
		{name: "specifier rules do not remove a tool", parent: []string{"Write"}, want: []string{"Write"}},
		{name: "duplicates once", parent: parent, requested: []string{"Read", "Read"}, want: []string{"Read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.SubagentTools(tt.parent, tt.requested, tt.removed)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SubagentTools (-want +got):\n%s", diff)
			}
		})
	}
	// Task is the Agent tool's old name: disallowing it removes Agent.
	if !l.Disallowed("Agent") || !l.Disallowed("Task") || l.Disallowed("Write") {
		t.Errorf("Disallowed: Agent %v, Task %v, Write %v", l.Disallowed("Agent"), l.Disallowed("Task"), l.Disallowed("Write"))
	}
	l2 := New(Config{})
	if got := l2.SubagentTools([]string{"Agent", "Read"}, []string{"Task"}, nil); !cmp.Equal(got, []string{"Agent"}) {
		t.Errorf("Task = %v, want [Agent]", got)
	}
	if got := l2.SubagentTools([]string{"Agent", "Read"}, nil, []string{"Task"}); !cmp.Equal(got, []string{"Read"}) {
		t.Errorf("removing Task = %v, want [Read]", got)
	}
}

func TestAuthorizerCarriesTheAgent(t *testing.T) {
	var seen []Agent
	l := New(Config{
		Authorize: func(ctx context.Context, a Agent, call *engine.ToolCall) engine.Decision {
			seen = append(seen, a)
			return engine.Decision{Allow: a.Main()}
		},
	})
	sub := Agent{ID: "a1", Type: "reviewer", Depth: 1, MaxTurns: 5}
	if d := l.AuthorizerFor(Agent{})(context.Background(), &engine.ToolCall{Name: "Read"}); !d.Allow {
		t.Error("main loop call denied")
	}
	if d := l.AuthorizerFor(sub)(context.Background(), &engine.ToolCall{Name: "Read"}); d.Allow {
		t.Error("subagent call allowed")
	}
	if diff := cmp.Diff([]Agent{{}, sub}, seen); diff != "" {
		t.Errorf("agents seen (-want +got):\n%s", diff)
	}
}
