// Command chart draws the scale benchmark's results: from a results.jsonl
// written by bench/scale, a PNG with two panels against the number of
// concurrent sessions: memory (MiB) and CPU per turn (ms), all axes on a
// log scale. There is one line per mode and model latency.
//
// Memory is what N concurrent sessions take: in-process, the process's
// peak RSS; for one process per session (procs, reference), N times the
// mean per-process peak RSS, since those runs cap how many processes run at
// once. Of several records with the same mode, latency and sessions, the
// last one counts. With -table it also writes the records as a markdown
// table.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run() error {
	in := flag.String("in", "results.jsonl", "results file")
	out := flag.String("out", "scale.png", "PNG to write")
	table := flag.String("table", "", "markdown table to write too; empty: none")
	flag.Parse()
	recs, err := result.ReadFile(*in)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return errors.New("no records in " + *in)
	}
	if err := writePNG(*out, series(recs)); err != nil {
		return err
	}
	if *table != "" {
		f, err := os.Create(*table)
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
		if err := result.WriteTable(f, recs); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

// point is one record as charted.
type point struct {
	Sessions  int
	MemMiB    float64
	CPUPerTur float64
}

// line is the points of one mode and latency, by sessions.
type line struct {
	Label  string
	Points []point

	mode    int // rank of the mode, for the order of lines
	latency float64
	h2c     bool // after the HTTP/1.1 line of the same mode and latency
}

// series groups recs into lines, in-process first, then agentloop -p,
// then the reference, each by latency; the points of a line are by
// sessions. Runs over h2c are lines of their own. A later record replaces
// an earlier one with the same mode, protocol, latency and sessions.
func series(recs []result.Record) []line {
	byLabel := map[string]map[int]point{}
	order := map[string]line{}
	for _, r := range recs {
		label := modeLabel(r.Mode)
		if r.TLS {
			label += " over TLS h2"
		}
		if r.H2C {
			label += " over h2c"
		}
		if r.Workload == "read" {
			label += ", Read only"
		}
		if r.Client != "" {
			label += ", " + r.Client + " client"
		}
		if r.MemLimitMiB > 0 {
			label += ", GOMEMLIMIT " + strconv.Itoa(r.MemLimitMiB) + " MiB"
		}
		label += ", model " + strconv.FormatFloat(r.LatencyMs, 'f', -1, 64) + " ms"
		mem := r.PeakRSSMiB
		if r.Mode == result.ModeProcs || r.Mode == result.ModeReference {
			mem = r.ProcPeakRSSMeanMiB * float64(r.Sessions)
		}
		if byLabel[label] == nil {
			byLabel[label] = map[int]point{}
			order[label] = line{mode: modeRank(r.Mode), latency: r.LatencyMs, h2c: r.H2C}
		}
		byLabel[label][r.Sessions] = point{Sessions: r.Sessions, MemMiB: mem, CPUPerTur: r.CPUPerTurnMs}
	}
	var lines []line
	for label, pts := range byLabel {
		l := order[label]
		l.Label = label
		for _, p := range pts {
			l.Points = append(l.Points, p)
		}
		slices.SortFunc(l.Points, func(a, b point) int { return cmp.Compare(a.Sessions, b.Sessions) })
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(cmp.Compare(a.mode, b.mode), cmp.Compare(a.latency, b.latency), compareBool(a.h2c, b.h2c), cmp.Compare(a.Label, b.Label))
	})
	return lines
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func modeRank(mode string) int {
	switch mode {
	case result.ModeInproc:
		return 0
	case result.ModeProcs:
		return 1
	case result.ModeReference:
		return 2
	}
	return 3
}

// modeLabel names a mode in the legend.
func modeLabel(mode string) string {
	switch mode {
	case result.ModeInproc:
		return "agentloop in-process"
	case result.ModeProcs:
		return "agentloop -p per session"
	case result.ModeReference:
		return "reference CLI per session"
	case result.ModeSDKRunner:
		return "anthropic-sdk-go tool runner in-process"
	case result.ModeInproc + "-before":
		return "agentloop in-process, earlier build"
	}
	return mode
}

// writePNG draws the two panels side by side into the file at path.
func writePNG(path string, lines []line) error {
	mem, err := panel("Memory of N concurrent sessions (per-session processes: N × one's peak RSS)", "MiB",
		lines, func(p point) float64 { return p.MemMiB })
	if err != nil {
		return err
	}
	cpu, err := panel("CPU per turn (tool subprocesses included)", "ms", lines, func(p point) float64 { return p.CPUPerTur })
	if err != nil {
		return err
	}
	img := vgimg.New(14*vg.Inch, 6*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 3, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8,
		PadLeft: vg.Inch / 8, PadRight: vg.Inch / 4}
	mem.Draw(tiles.At(dc, 0, 0))
	cpu.Draw(tiles.At(dc, 1, 0))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("png: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("png: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("png: %w", err)
	}
	return nil
}

// panel is one log-log plot of y against sessions, a line with points per
// series; points whose y is not positive are left out. The y axis reaches
// well above the data, to keep the legend (top right) clear of it.
func panel(title, ylabel string, lines []line, y func(point) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "concurrent sessions"
	p.Y.Label.Text = ylabel
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	var args []any
	for _, l := range lines {
		var xys plotter.XYs
		for _, pt := range l.Points {
			if v := y(pt); v > 0 {
				xys = append(xys, plotter.XY{X: float64(pt.Sessions), Y: v})
			}
		}
		if len(xys) > 0 {
			args = append(args, l.Label, xys)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("panel %q: %w", title, err)
	}
	if p.Y.Max > 0 {
		p.Y.Max *= 10
		p.Y.Min /= 2
		p.X.Min /= 1.5
		p.X.Max *= 1.5
	}
	return p, nil
}
