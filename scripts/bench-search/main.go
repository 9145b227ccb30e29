// bench-search drives the Grep and Glob benchmark of scripts/bench-search.sh.
// It runs the real tools as the model calls them, and generates the large
// synthetic tree the benchmark searches.
//
//	go run ./scripts/bench-search gen DIR SIZE_MB
//	go run ./scripts/bench-search grep [flags] DIR INPUT
//	go run ./scripts/bench-search glob [flags] DIR INPUT
//	go run ./scripts/bench-search time [flags] -- CMD ARG... --- CMD ARG...
//	go run ./scripts/bench-search longline [-runs N] DIR
//
// INPUT is the tool's JSON input, or @FILE to read it from FILE. The tool
// runs with DIR as the session's working directory (so paths print relative
// to it, as rg prints them when run in DIR), its input checked against the
// tool's schema as the loop does. The result's text goes to stdout.
//
// Flags: -count prints the number of results instead (files, lines, counts
// or paths, all of them), -n N runs the call N times, -cpuprofile FILE
// writes a CPU profile of the runs.
//
// time runs two commands in turn, their output discarded, and prints one
// CSV line: the median and the shortest wall time of each in seconds, the
// median CPU time (user and system) of each, and the number of timed runs.
// The runs alternate (A B, B A, A B, ...) so that both commands see the same
// conditions on a machine whose load changes, which running all of one
// command and then all of the other (as hyperfine does) would not ensure.
// Flags: -warmup N untimed rounds (default 2), -runs N timed rounds at most
// (default 10), -min-runs N at least (default 3), -seconds S: stop after S
// seconds of timed rounds once -min-runs are done (default 60).
//
// longline writes files of a single line of 1, 4 and 16 MB (and a 20-byte
// one, to show the cost of starting the processes) into DIR and
// times Grep (this program's grep subcommand, one process per run) against
// rg on each, in alternation as time does (2 warm-up rounds, then -runs
// rounds, default 7). It prints a Markdown table of the medians and the
// shortest times, and their ratios. See docs/benchmarks-search.md, "Long lines".
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "gen":
		if len(os.Args) != 4 {
			usage()
		}
		mb, err := strconv.Atoi(os.Args[3])
		if err != nil || mb <= 0 {
			usage()
		}
		if err := generate(os.Args[2], int64(mb)<<20); err != nil {
			fmt.Fprintln(os.Stderr, "bench-search gen:", err)
			os.Exit(1)
		}
	case "grep", "glob":
		runTool(os.Args[1], os.Args[2:])
	case "time":
		timeCommands(os.Args[2:])
	case "longline":
		longLines(os.Args[2:])
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  bench-search gen DIR SIZE_MB
  bench-search grep|glob [-count] [-n N] [-cpuprofile FILE] DIR INPUT|@FILE
  bench-search time [-warmup N] [-runs N] [-min-runs N] [-seconds S] -- CMD ARG... --- CMD ARG...
  bench-search longline [-runs N] DIR`)
	os.Exit(2)
}

// timeCommands is the time subcommand.
func timeCommands(args []string) {
	fs := flag.NewFlagSet("time", flag.ExitOnError)
	warmup := fs.Int("warmup", 2, "untimed rounds")
	runs := fs.Int("runs", 10, "most timed rounds")
	minRuns := fs.Int("min-runs", 3, "fewest timed rounds")
	seconds := fs.Float64("seconds", 60, "stop after this many seconds of timed rounds")
	fs.Parse(args)
	cmds := [][]string{nil}
	for _, a := range fs.Args() {
		if a == "---" {
			cmds = append(cmds, nil)
			continue
		}
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], a)
	}
	if len(cmds) != 2 || len(cmds[0]) == 0 || len(cmds[1]) == 0 {
		usage()
	}
	var wall, cpu [2][]time.Duration
	start := time.Now()
	for round := 0; ; round++ {
		timed := round >= *warmup
		n := round - *warmup
		if timed && (n >= *runs || n >= *minRuns && time.Since(start).Seconds() > *seconds) {
			break
		}
		if round == *warmup {
			start = time.Now()
		}
		for k := range 2 {
			c := k
			if round%2 == 1 {
				c = 1 - k
			}
			w, u := runOnce(cmds[c])
			if timed {
				wall[c] = append(wall[c], w)
				cpu[c] = append(cpu[c], u)
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		if len(d)%2 == 1 {
			return d[len(d)/2]
		}
		return (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	fmt.Printf("%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n",
		median(wall[0]).Seconds(), slices.Min(wall[0]).Seconds(),
		median(wall[1]).Seconds(), slices.Min(wall[1]).Seconds(),
		median(cpu[0]).Seconds(), median(cpu[1]).Seconds(), len(wall[0]))
}

// longLines is the longline subcommand.
func longLines(args []string) {
	fs := flag.NewFlagSet("longline", flag.ExitOnError)
	runs := fs.Int("runs", 7, "timed rounds")
	fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	dir, err := filepath.Abs(fs.Arg(0))
	check(err)
	check(os.MkdirAll(dir, 0o755))
	self, err := os.Executable()
	check(err)
	cases := []struct{ name, input, rg string }{
		{"literal, files", `{"pattern":"ErrUnexpectedEOF","path":%q,"head_limit":0}`, "-l ErrUnexpectedEOF"},
		{"literal, content", `{"pattern":"ErrUnexpectedEOF","output_mode":"content","path":%q,"head_limit":0}`, "-n ErrUnexpectedEOF"},
		{"literal, count", `{"pattern":"ErrUnexpectedEOF","output_mode":"count","path":%q,"head_limit":0}`, "-c ErrUnexpectedEOF"},
		{"regex, content", `{"pattern":"Err\\w+EOF","output_mode":"content","path":%q,"head_limit":0}`, `-n Err\w+EOF`},
		{"no literal, content", `{"pattern":"[A-Z][a-z]+[0-9]{2,}[A-Z]","output_mode":"content","path":%q,"head_limit":0}`, "-n [A-Z][a-z]+[0-9]{2,}[A-Z]"},
	}
	fmt.Println("| file | case | rg ms (median, min) | Grep ms (median, min) | Grep / rg (median, min) | Grep ms per MB (min) |")
	fmt.Println("|---|---|---|---|---|---|")
	// Size 0 is a one-line file of 20 bytes: the cost of starting the
	// processes, which the other rows include.
	for _, mb := range []int{0, 1, 4, 16} {
		name := fmt.Sprintf("line%dmb.txt", mb)
		path := filepath.Join(dir, name)
		text := longLine(mb << 20)
		if mb == 0 {
			text = []byte("io.ErrUnexpectedEOF\n")
		}
		check(os.WriteFile(path, text, 0o644))
		for _, c := range cases {
			if mb == 0 && c.name != "literal, content" {
				continue
			}
			rgArgs := append([]string{"rg", "--no-config"}, strings.Fields(c.rg)...)
			cmds := [2][]string{
				append(rgArgs, path),
				{self, "grep", dir, fmt.Sprintf(c.input, name)},
			}
			var wall [2][]time.Duration
			for round := range 2 + *runs {
				for k := range 2 {
					i := k
					if round%2 == 1 {
						i = 1 - k
					}
					w, _ := runOnce(cmds[i])
					if round >= 2 {
						wall[i] = append(wall[i], w)
					}
				}
			}
			ms := func(d time.Duration) float64 { return d.Seconds() * 1000 }
			rg, gr := ms(medianOf(wall[0])), ms(medianOf(wall[1]))
			rgMin, grMin := ms(slices.Min(wall[0])), ms(slices.Min(wall[1]))
			size, perMB := fmt.Sprintf("%d MB", mb), fmt.Sprintf("%.2f", grMin/float64(mb))
			if mb == 0 {
				size, perMB = "20 bytes", ""
			}
			fmt.Printf("| %s | %s | %.2f, %.2f | %.2f, %.2f | %.2f×, %.2f× | %s |\n", size, c.name, rg, rgMin, gr, grMin, gr/rg, grMin/rgMin, perMB)
		}
	}
}

func medianOf(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

// longLine is a text of size bytes without a line break: words, with
// io.ErrUnexpectedEOF every 350 bytes or so and identifiers like
// Token42Xyz every 1.4 KB or so, the same for a given size.
func longLine(size int) []byte {
	r := rand.New(rand.NewPCG(uint64(size), 1))
	words := []string{"the", "reader", "returns", "an", "error", "when", "buffer", "is", "full", "data", "and", "of", "stream"}
	b := make([]byte, 0, size+64)
	for len(b) < size {
		switch n := r.IntN(256); {
		case n < 1:
			b = fmt.Appendf(b, "Token%dXyz ", 10+r.IntN(90))
		case n < 4:
			b = append(b, "io.ErrUnexpectedEOF "...)
		default:
			b = append(b, words[r.IntN(len(words))]...)
			b = append(b, ' ')
		}
	}
	return b[:size]
}

// runOnce runs a command with its output discarded and returns its wall
// and CPU times. A failure ends the program.
func runOnce(argv []string) (wall, cpu time.Duration) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := time.Now()
	err := cmd.Run()
	wall = time.Since(t)
	// rg exits with 1 when it finds nothing, which is no failure here.
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1 && stderr.Len() == 0) {
		fmt.Fprintf(os.Stderr, "bench-search time: %s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
		os.Exit(1)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// runTool runs Grep or Glob in dir with the given input.
func runTool(name string, args []string) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	count := fs.Bool("count", false, "print the number of results instead of the text")
	n := fs.Int("n", 1, "run the call this many times")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	fs.Parse(args)
	if fs.NArg() != 2 {
		usage()
	}
	dir, err := filepath.Abs(fs.Arg(0))
	check(err)
	input := []byte(fs.Arg(1))
	if file, ok := strings.CutPrefix(fs.Arg(1), "@"); ok {
		input, err = os.ReadFile(file)
		check(err)
	}
	tl := tools.Grep()
	if name == "glob" {
		tl = tools.Glob()
	}
	info := tl.Info()
	schema, err := tool.CompileSchema(info.InputSchema)
	check(err)
	valid, err := schema.Validate(info.Name, input)
	check(err)
	env := &tool.Env{Cwd: dir, Home: dir, SessionID: "bench", State: &tool.State{}}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var res tool.Result
	for range max(*n, 1) {
		res, err = tl.Run(context.Background(), &tool.Call{ID: "toolu_bench", Input: valid, Env: env})
		check(err)
	}
	if res.IsError {
		fmt.Fprintln(os.Stderr, "tool error:", res.Text())
		os.Exit(1)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer w.Flush()
	if *count {
		fmt.Fprintln(w, resultCount(res.Structured))
		return
	}
	w.WriteString(res.Text())
	w.WriteByte('\n')
}

// resultCount is how many results a call found in all, whatever it showed.
func resultCount(s any) int {
	switch r := s.(type) {
	case tools.GrepFilesResult:
		return r.TotalFiles
	case tools.GrepContentResult:
		return r.TotalLines
	case tools.GrepCountResult:
		return r.NumMatches
	case tools.GlobResult:
		return r.TotalMatches
	}
	fmt.Fprintf(os.Stderr, "unexpected result %T\n", s)
	os.Exit(1)
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-search:", err)
		os.Exit(1)
	}
}

// ---- The generated tree ----
//
// The tree is a git working tree (a bare .git directory marks it, so that
// .gitignore files apply) of "modules", each a few dozen package
// directories of source-like files in Go, Python, JavaScript, Markdown and
// JSON, with large JSON fixtures, binary assets, hidden cache directories,
// and build output, node_modules and generated files that .gitignore files
// exclude. The content is a deterministic function of the module count:
// every file's text comes from a generator seeded with its path.
//
// Some strings the benchmark looks for are planted at fixed rates, as they
// occur in real code: io.ErrUnexpectedEOF, methods named Read*, the word
// "deprecated" in various cases, identifiers like Token42Xyz, and dates.

// treeVersion changes whenever the generator's output does, so that the
// script regenerates a cached tree.
const treeVersion = "1"

// stampName marks a complete tree; it holds the version and size.
const stampName = ".agentloop-bench-tree"
