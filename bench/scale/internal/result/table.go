package result

import (
	"fmt"
	"io"
	"strconv"
)

// WriteTable writes recs as a markdown table, one row per record in order.
func WriteTable(w io.Writer, recs []Record) error {
	const head = "| mode | sessions | tool turns | latency ms | wall s | turns/s | errors | CPU ms/turn | self CPU ms/turn | peak RSS MiB | KiB/in-flight | KiB/idle (RSS) | KiB/idle (heap) | goroutines | overhead p50/p99 ms | setup p50/p99 ms | proc RSS mean/max MiB | load before |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	if _, err := io.WriteString(w, head); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	for _, r := range recs {
		mode := modeLabel(r)
		_, err := fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mode, r.Sessions, r.ToolTurns, num(r.LatencyMs, 0), num(r.WallS, 2), num(r.TurnsPerS, 0), r.Errors,
			num(r.CPUPerTurnMs, 3), opt(r.SelfCPUPerTurnMs, 3), num(r.PeakRSSMiB, 1), opt(r.RSSPerInflightKiB, 1),
			opt(r.IdleRSSPerSessKiB, 1), opt(r.IdleHeapPerSessKiB, 1), optInt(r.GoroutinesPeak),
			pair(r.OverheadP50Ms, r.OverheadP99Ms, 3), pair(r.SetupP50Ms, r.SetupP99Ms, 2),
			pair(r.ProcPeakRSSMeanMiB, r.ProcPeakRSSMaxMiB, 1), num(r.LoadBefore, 1))
		if err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	return writeCPUTable(w, recs)
}

// writeCPUTable writes, after the main table, where the CPU of each run
// that measured it went (Record.UserCPUPerTurnMs and the fields after
// it); nothing when none did.
func writeCPUTable(w io.Writer, recs []Record) error {
	head := true
	for _, r := range recs {
		if r.UserCPUPerTurnMs == 0 && r.SysCPUPerTurnMs == 0 {
			continue
		}
		if head {
			head = false
			if _, err := io.WriteString(w, "\nWhere the CPU went, per turn (this process alone; the collector's CPU is the runtime's estimate):\n\n"+
				"| mode | sessions | user ms | system ms | minor faults | allocated KiB | allocations | collections | collector ms (est.) |\n"+
				"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"); err != nil {
				return fmt.Errorf("write table: %w", err)
			}
		}
		if _, err := fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %d | %s |\n",
			modeLabel(r), r.Sessions, num(r.UserCPUPerTurnMs, 3), num(r.SysCPUPerTurnMs, 3), num(r.FaultsPerTurn, 1),
			num(r.AllocKiBPerTurn, 1), num(r.AllocsPerTurn, 0), r.GCCycles, num(r.GCCPUPerTurnMs, 3)); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	return nil
}

// modeLabel names r's mode in a table: the mode, its transport, workload,
// client and memory limit.
func modeLabel(r Record) string {
	mode := r.Mode
	if r.H2C {
		mode += " h2c"
	}
	if r.TLS {
		mode += " tls h2"
	}
	if r.Workload == "read" {
		mode += " (Read only)"
	}
	if r.Client != "" {
		mode += ", " + r.Client + " client"
	}
	if r.MemLimitMiB > 0 {
		mode += fmt.Sprintf(" memlimit %d MiB", r.MemLimitMiB)
	}
	if r.Parallel > 0 {
		mode = fmt.Sprintf("%s (%d at once)", r.Mode, r.Parallel)
	}
	return mode
}

func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// opt is num, or "–" for a quantity the mode does not measure.
func opt(v float64, prec int) string {
	if v == 0 {
		return "–"
	}
	return num(v, prec)
}

func optInt(v int) string {
	if v == 0 {
		return "–"
	}
	return strconv.Itoa(v)
}

func pair(a, b float64, prec int) string {
	if a == 0 && b == 0 {
		return "–"
	}
	return num(a, prec) + " / " + num(b, prec)
}
