package main

import (
	"fmt"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

// usage is what this process has spent so far: CPU time by kind, minor
// page faults, and the Go runtime's counters of allocation and
// collection. Two of them, taken before and after a run, say where the
// run's CPU went (usage.perTurn).
type usage struct {
	user, sys    time.Duration
	minorFaults  int64
	allocBytes   uint64
	allocObjects uint64
	gcCycles     uint64
	gcCPU        float64 // seconds, the runtime's estimate
}

// usageMetrics are the runtime/metrics counters a usage holds, in the
// order readUsage reads them.
var usageMetrics = []string{
	"/gc/heap/allocs:bytes",
	"/gc/heap/allocs:objects",
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/total:cpu-seconds",
}

// readUsage takes a usage of this process now.
func readUsage() (usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}, fmt.Errorf("getrusage: %w", err)
	}
	s := make([]metrics.Sample, len(usageMetrics))
	for i, name := range usageMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	for i := range 3 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return usage{}, fmt.Errorf("runtime metric %s: not a uint64", s[i].Name)
		}
	}
	if s[3].Value.Kind() != metrics.KindFloat64 {
		return usage{}, fmt.Errorf("runtime metric %s: not a float64", s[3].Name)
	}
	return usage{
		user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano()),
		minorFaults: ru.Minflt,
		allocBytes:  s[0].Value.Uint64(), allocObjects: s[1].Value.Uint64(),
		gcCycles: s[2].Value.Uint64(), gcCPU: s[3].Value.Float64(),
	}, nil
}

// perTurn sets rec's account of where the CPU went between before and u,
// over turns turns.
func (u usage) perTurn(before usage, turns int, rec *result.Record) {
	if turns <= 0 {
		return
	}
	n := float64(turns)
	rec.UserCPUPerTurnMs = ms(u.user-before.user) / n
	rec.SysCPUPerTurnMs = ms(u.sys-before.sys) / n
	rec.FaultsPerTurn = float64(u.minorFaults-before.minorFaults) / n
	rec.AllocKiBPerTurn = float64(u.allocBytes-before.allocBytes) / 1024 / n
	rec.AllocsPerTurn = float64(u.allocObjects-before.allocObjects) / n
	rec.GCCycles = int(u.gcCycles - before.gcCycles)
	rec.GCCPUPerTurnMs = (u.gcCPU - before.gcCPU) * 1000 / n
}
