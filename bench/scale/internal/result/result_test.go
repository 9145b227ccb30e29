package result

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		p       float64
		want    float64
		wantErr bool
	}{
		{"empty", nil, 50, 0, true},
		{"p out of range", []float64{1}, 0, 0, true},
		{"single", []float64{7}, 99, 7, false},
		{"median of odd", []float64{3, 1, 2}, 50, 2, false},
		{"median of even is the lower", []float64{4, 1, 3, 2}, 50, 2, false},
		{"p99 of 100", seq(100), 99, 99, false},
		{"p99 of 1000", seq(1000), 99, 990, false},
		{"p100 is the max", seq(10), 100, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Percentile(tt.samples, tt.p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Percentile(…, %v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

// seq returns 1..n in reverse order, so Percentile has to sort.
func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(n - i)
	}
	return s
}

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	want := []Record{
		{Mode: ModeInproc, Sessions: 100, ToolTurns: 5, LatencyMs: 200, Turns: 600, CPUPerTurnMs: 0.8, GoroutinesPeak: 412},
		{Mode: ModeInproc, Sessions: 100, ToolTurns: 5, H2C: true},
		{Mode: ModeProcs, Sessions: 50, ToolTurns: 5, Parallel: 8, ProcPeakRSSMaxMiB: 14.5},
	}
	for i := range want {
		if err := Append(path, &want[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if _, err := Read(strings.NewReader("{}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed line: err = %v, want one naming line 2", err)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	err := WriteTable(&b, []Record{
		{Mode: ModeInproc, Sessions: 1000, ToolTurns: 5, LatencyMs: 200, WallS: 3.5, TurnsPerS: 1714.3, CPUPerTurnMs: 0.9123,
			SelfCPUPerTurnMs: 0.5, PeakRSSMiB: 150.25, RSSPerInflightKiB: 120, IdleRSSPerSessKiB: 30, IdleHeapPerSessKiB: 20,
			GoroutinesPeak: 3000, LoadBefore: 7.25, OverheadP50Ms: 0.1, OverheadP99Ms: 2.5, SetupP50Ms: 1, SetupP99Ms: 9,
			UserCPUPerTurnMs: 0.3, SysCPUPerTurnMs: 0.125, FaultsPerTurn: 6.25, AllocKiBPerTurn: 43.5, AllocsPerTurn: 285.4,
			GCCycles: 11, GCCPUPerTurnMs: 0.062},
		{Mode: ModeProcs, Sessions: 50, ToolTurns: 5, Parallel: 8, WallS: 2, TurnsPerS: 150, CPUPerTurnMs: 3, PeakRSSMiB: 110,
			ProcPeakRSSMeanMiB: 13.5, ProcPeakRSSMaxMiB: 14},
		{Mode: ModeInproc, H2C: true, Sessions: 10, ToolTurns: 5, WallS: 1, TurnsPerS: 60, CPUPerTurnMs: 1, PeakRSSMiB: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"| inproc | 1000 | 5 | 200 | 3.50 | 1714 | 0 | 0.912 | 0.500 | 150.2 | 120.0 | 30.0 | 20.0 | 3000 | 0.100 / 2.500 | 1.00 / 9.00 | – | 7.2 |",
		"| procs (8 at once) | 50 | 5 | 0 | 2.00 | 150 | 0 | 3.000 | – | 110.0 | – | – | – | – | – | – | 13.5 / 14.0 | 0.0 |",
		"| inproc h2c | 10 | 5 | 0 | 1.00 | 60 | 0 | 1.000 | – | 50.0 | – | – | – | – | – | – | – | 0.0 |",
		"",
		"Where the CPU went, per turn (this process alone; the collector's CPU is the runtime's estimate):",
		"",
		"| mode | sessions | user ms | system ms | minor faults | allocated KiB | allocations | collections | collector ms (est.) |",
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|",
		"| inproc | 1000 | 0.300 | 0.125 | 6.2 | 43.5 | 285 | 11 | 0.062 |",
	}
	if diff := cmp.Diff(want, lines[2:]); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
