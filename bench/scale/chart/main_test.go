package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

var recs = []result.Record{
	{Mode: result.ModeInproc, Sessions: 1000, LatencyMs: 0, PeakRSSMiB: 300, CPUPerTurnMs: 2},
	{Mode: result.ModeInproc, Sessions: 100, LatencyMs: 0, PeakRSSMiB: 60, CPUPerTurnMs: 1.5},
	{Mode: result.ModeInproc, Sessions: 1000, LatencyMs: 0, PeakRSSMiB: 200, CPUPerTurnMs: 1}, // a re-run replaces
	{Mode: result.ModeInproc, Sessions: 100, LatencyMs: 200, PeakRSSMiB: 70, CPUPerTurnMs: 1.2},
	{Mode: result.ModeInproc, H2C: true, Sessions: 100, LatencyMs: 200, PeakRSSMiB: 50, CPUPerTurnMs: 1.1}, // not a re-run
	{Mode: result.ModeReference, Sessions: 10, LatencyMs: 0, Parallel: 4, ProcPeakRSSMeanMiB: 300, CPUPerTurnMs: 300},
	{Mode: result.ModeProcs, Sessions: 50, LatencyMs: 0, Parallel: 4, PeakRSSMiB: 60, ProcPeakRSSMeanMiB: 14, CPUPerTurnMs: 5},
}

func TestSeries(t *testing.T) {
	want := []line{
		{Label: "agentloop in-process, model 0 ms", Points: []point{{100, 60, 1.5}, {1000, 200, 1}}},
		{Label: "agentloop in-process, model 200 ms", Points: []point{{100, 70, 1.2}}},
		{Label: "agentloop in-process over h2c, model 200 ms", Points: []point{{100, 50, 1.1}}},
		// one process per session: N × the per-process peak, not the capped sum.
		{Label: "agentloop -p per session, model 0 ms", Points: []point{{50, 700, 5}}},
		{Label: "reference CLI per session, model 0 ms", Points: []point{{10, 3000, 300}}},
	}
	if diff := cmp.Diff(want, series(recs), cmpopts.IgnoreUnexported(line{})); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scale.png")
	if err := writePNG(path, series(recs)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 10_000 {
		t.Errorf("wrote %d bytes starting %q, want a PNG image", len(b), b[:min(len(b), 8)])
	}
}
