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

// scriptedServer is the bench server's script, in this process; h2c is its
// -h2c flag.
func scriptedServer(t *testing.T, fixture string, turns int, h2c bool) *agentlooptest.Server {
	t.Helper()
	srv, err := agentlooptest.StartWith(&agentlooptest.ServerOptions{H2C: h2c})
	if err != nil {
		t.Fatal(err)
	}
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
	srv := scriptedServer(t, fixture, 3, false)
	cfg := &config{fixture: fixture, configDir: t.TempDir(), serverURL: srv.URL, sessions: 1}
	prov, err := newProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
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

// TestRunInproc runs the in-process mode on a few sessions, over HTTP/1.1
// and over h2c, and checks the record's counts. Sessions that speak h2c to
// a server that does not fail, which shows -h2c really changes the
// protocol.
func TestRunInproc(t *testing.T) {
	fixture, err := script.WriteFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                 string
		serverH2C, clientH2C bool
		wantTurns, wantErrs  int
	}{
		{"HTTP/1.1", false, false, 12, 0},
		{"h2c", true, true, 12, 0},
		{"h2c client, HTTP/1.1 server", false, true, 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scriptedServer(t, fixture, 2, tt.serverH2C)
			cfg := &config{sessions: 4, turns: 2, fixture: fixture, configDir: t.TempDir(), serverURL: srv.URL, prompt: "go", h2c: tt.clientH2C}
			var rec result.Record
			limit := time.Minute
			if tt.wantErrs > 0 {
				limit = 5 * time.Second // the provider retries the failures for longer
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			if err := runInproc(ctx, cfg, &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Turns != tt.wantTurns || rec.Errors != tt.wantErrs {
				t.Errorf("%d turns, %d errors (first: %s); want %d, %d", rec.Turns, rec.Errors, rec.FirstErr, tt.wantTurns, tt.wantErrs)
			}
			if tt.wantErrs == 0 && (rec.CPUPerTurnMs <= 0 || rec.PeakRSSMiB <= 0 || rec.OverheadP50Ms <= 0) {
				t.Errorf("record %+v: want CPU, RSS and overhead measured", rec)
			}
		})
	}
}
