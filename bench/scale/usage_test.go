package main

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/google/go-cmp/cmp"
)

// sink keeps TestReadUsageSeesAllocation's allocations from being
// optimised away.
var sink [][]byte

// TestReadUsageSeesAllocation: what the process allocates between two
// readUsage calls shows in their difference.
func TestReadUsageSeesAllocation(t *testing.T) {
	// No collection between the reads: then nothing is freed, and a
	// counter of frees read by mistake stays put.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	u0, err := readUsage()
	if err != nil {
		t.Fatal(err)
	}
	// Large objects: the runtime counts them as they are made (small
	// ones when their span is handed back, so the last few may be
	// missing from a read).
	for range 64 {
		sink = append(sink, make([]byte, 64<<10))
	}
	u1, err := readUsage()
	if err != nil {
		t.Fatal(err)
	}
	sink = nil
	if got := u1.allocBytes - u0.allocBytes; got < 4<<20 {
		t.Errorf("allocated bytes between the reads: %d, want at least 4 MiB", got)
	}
	if got := u1.allocObjects - u0.allocObjects; got < 64 {
		t.Errorf("allocated objects between the reads: %d, want at least 64", got)
	}
	if u1.user < u0.user || u1.sys < u0.sys || u1.minorFaults < u0.minorFaults {
		t.Errorf("CPU or faults went down: %+v then %+v", u0, u1)
	}
}

// TestUsagePerTurn: the differences of two usages, per turn, in the
// record's units.
func TestUsagePerTurn(t *testing.T) {
	before := usage{user: time.Second, sys: 2 * time.Second, minorFaults: 100, allocBytes: 1 << 20,
		allocObjects: 1000, gcCycles: 3, gcCPU: 0.5}
	after := usage{user: 3 * time.Second, sys: 3 * time.Second, minorFaults: 4100, allocBytes: 1<<20 + 4000*1024,
		allocObjects: 5000, gcCycles: 13, gcCPU: 0.9}
	var got result.Record
	after.perTurn(before, 1000, &got)
	want := result.Record{UserCPUPerTurnMs: 2, SysCPUPerTurnMs: 1, FaultsPerTurn: 4, AllocKiBPerTurn: 4,
		AllocsPerTurn: 4, GCCycles: 10, GCCPUPerTurnMs: 0.4}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); d != "" {
		t.Errorf("per turn (-want +got):\n%s", d)
	}
	var none result.Record
	after.perTurn(before, 0, &none)
	if d := cmp.Diff(result.Record{}, none); d != "" {
		t.Errorf("no turns: the record changed (-want +got):\n%s", d)
	}
}
