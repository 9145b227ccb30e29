package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

// scriptedServer is the bench server's script, in this process.
func scriptedServer(t *testing.T, fixture string, turns int) *agentlooptest.Server {
	t.Helper()
	srv := agentlooptest.NewServer()
	t.Cleanup(srv.Close)
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		done := script.ToolResults(len(r.Params.Messages))
		if done < turns {
			c := script.Step(fixture, done)
			return agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", done), c.Name, c.Input), true
		}
		return agentlooptest.Text(script.Answer), true
	})
	return srv
}

// TestSessionTimeline runs one real session of three tool turns (Read,
// Grep, Bash) and checks that its readings have the shape overheads needs:
// one reading per request, one tool span per tool turn, every span inside
// its turn.
func TestSessionTimeline(t *testing.T) {
	fixture, err := script.WriteFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := scriptedServer(t, fixture, 3)
	prov, err := newProvider(srv.URL, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{fixture: fixture, configDir: t.TempDir()}
	tl := &timeline{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := runSession(withTimeline(ctx, tl), tl, "go", sessionOptions(cfg, prov)); err != nil {
		t.Fatal(err)
	}
	if n := tl.turns(); n != 4 {
		t.Errorf("turns = %d, want 4", n)
	}
	setup, between, ok := tl.overheads()
	if !ok || len(between) != 3 || setup <= 0 {
		t.Fatalf("overheads = %v, %v, %v; want a set-up time and 3 samples", setup, between, ok)
	}
	for k := range 3 {
		if tl.toolStart[k].Before(tl.reqStart[k]) || tl.toolEnd[k].After(tl.reqStart[k+1]) {
			t.Errorf("tool %d ran %v–%v, outside its turn %v–%v", k, tl.toolStart[k], tl.toolEnd[k], tl.reqStart[k], tl.reqStart[k+1])
		}
	}
	if len(srv.Mismatches()) > 0 {
		t.Errorf("server mismatches: %v", srv.Mismatches())
	}
}

// TestRunInproc runs the in-process mode on a few sessions and checks the
// record's counts.
func TestRunInproc(t *testing.T) {
	fixture, err := script.WriteFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := scriptedServer(t, fixture, 2)
	cfg := &config{sessions: 4, turns: 2, fixture: fixture, configDir: t.TempDir(), serverURL: srv.URL, prompt: "go"}
	var rec result.Record
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := runInproc(ctx, cfg, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Turns != 12 || rec.Errors != 0 || rec.CPUPerTurnMs <= 0 || rec.PeakRSSMiB <= 0 || rec.OverheadP50Ms <= 0 {
		t.Errorf("record %+v: want 12 turns, no errors, CPU, RSS and overhead measured", rec)
	}
}
