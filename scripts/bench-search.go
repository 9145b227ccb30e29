//go:build ignore

// bench-search drives the Grep and Glob benchmark of scripts/bench-search.sh.
// It runs the real tools as the model calls them, and generates the large
// synthetic tree the benchmark searches.
//
//	go run scripts/bench-search.go gen DIR SIZE_MB
//	go run scripts/bench-search.go grep [flags] DIR INPUT
//	go run scripts/bench-search.go glob [flags] DIR INPUT
//	go run scripts/bench-search.go time [flags] -- CMD ARG... --- CMD ARG...
//	go run scripts/bench-search.go longline [-runs N] DIR
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
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// moduleBytes is about how much one module weighs.
const moduleBytes = 29 << 20

func generate(dir string, target int64) error {
	modules := int((target + moduleBytes - 1) / moduleBytes)
	stamp := fmt.Sprintf("version %s modules %d\n", treeVersion, modules)
	if old, err := os.ReadFile(filepath.Join(dir, stampName)); err == nil && string(old) == stamp {
		fmt.Fprintf(os.Stderr, "%s is up to date\n", dir)
		return nil
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, stampName)); err != nil {
			return fmt.Errorf("%s is not empty and is not a benchmark tree: remove it or choose another directory", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		return err
	}
	g := &gen{root: dir}
	g.write(".git/HEAD", []byte("ref: refs/heads/main\n"))
	g.write(".gitignore", []byte("# build output and dependencies\nbuild/\nnode_modules/\n*.log\n/tmp/\n*.min.js\n"))
	g.write("README.md", mdFile(newRand("README.md"), 6<<10))

	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 2 {
		wg.Go(func() {
			for {
				m := int(next.Add(1) - 1)
				if m >= modules {
					return
				}
				g.module(m)
			}
		})
	}
	wg.Wait()
	if g.err != nil {
		return g.err
	}
	fmt.Fprintf(os.Stderr, "generated %d files, %.2f GB in %s\n", g.files.Load(), float64(g.bytes.Load())/(1<<30), dir)
	return os.WriteFile(filepath.Join(dir, stampName), []byte(stamp), 0o644)
}

type gen struct {
	root  string
	files atomic.Int64
	bytes atomic.Int64
	mu    sync.Mutex
	err   error
}

func (g *gen) write(rel string, data []byte) {
	abs := filepath.Join(g.root, filepath.FromSlash(rel))
	err := os.MkdirAll(filepath.Dir(abs), 0o755)
	if err == nil {
		err = os.WriteFile(abs, data, 0o644)
	}
	if err != nil {
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
		return
	}
	g.files.Add(1)
	g.bytes.Add(int64(len(data)))
}

// newRand returns a generator seeded with key.
func newRand(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// module writes module m.
func (g *gen) module(m int) {
	r := newRand("module " + strconv.Itoa(m))
	mod := fmt.Sprintf("mod%03d-%s", m, word(r))
	g.write(mod+"/.gitignore", []byte("generated_*.go\n*.tmp\n"))
	g.write(mod+"/go.mod", []byte("module example.com/"+mod+"\n\ngo 1.22\n"))
	for p := range 24 {
		pkg := word(r) + strconv.Itoa(p)
		dir := mod + "/" + pkg
		if p%3 == 1 {
			dir = mod + "/internal/" + word(r) + "/" + pkg
		}
		nfiles := 22 + r.IntN(20)
		for f := range nfiles {
			ext := pick(r, []string{".go", ".go", ".go", ".go", ".py", ".py", ".js", ".js", ".md", ".json"})
			name := fmt.Sprintf("%s/%s_%d%s", dir, word(r), f, ext)
			if ext == ".go" && r.IntN(8) == 0 {
				name = fmt.Sprintf("%s/%s_%d_test.go", dir, word(r), f)
			}
			g.write(name, source(newRand(name), ext, fileSize(r)))
		}
		switch p % 8 {
		case 0: // build output, ignored
			for f := range 4 {
				name := fmt.Sprintf("%s/build/bundle%d.js", dir, f)
				g.write(name, jsFile(newRand(name), 96<<10))
			}
		case 3: // generated code and logs, ignored by the module's .gitignore and the root's
			name := dir + "/generated_" + word(r) + ".go"
			g.write(name, goFile(newRand(name), 64<<10))
			name = dir + "/server.log"
			g.write(name, mdFile(newRand(name), 128<<10))
		case 5: // binary assets
			for f := range 3 {
				name := fmt.Sprintf("%s/assets/img%d.png", dir, f)
				g.write(name, binaryFile(newRand(name), 24<<10+r.IntN(64<<10)))
			}
		case 6: // a hidden cache
			name := dir + "/.cache/" + word(r) + ".go"
			g.write(name, goFile(newRand(name), 32<<10))
		}
	}
	for f := range 2 {
		name := fmt.Sprintf("%s/testdata/fixture%d.json", mod, f)
		g.write(name, jsonFile(newRand(name), 1536<<10))
	}
	name := mod + "/node_modules/lib/index.js"
	g.write(name, jsFile(newRand(name), 512<<10))
	name = mod + "/node_modules/lib/index.min.js"
	g.write(name, jsFile(newRand(name), 256<<10))
}

// fileSize draws a source file's size: mostly a few KB, sometimes much more.
func fileSize(r *rand.Rand) int {
	switch x := r.IntN(100); {
	case x < 65:
		return 2<<10 + r.IntN(14<<10)
	case x < 93:
		return 16<<10 + r.IntN(48<<10)
	default:
		return 64<<10 + r.IntN(256<<10)
	}
}

func source(r *rand.Rand, ext string, size int) []byte {
	switch ext {
	case ".go":
		return goFile(r, size)
	case ".py":
		return pyFile(r, size)
	case ".js":
		return jsFile(r, size)
	case ".md":
		return mdFile(r, size)
	}
	return jsonFile(r, size)
}

var syllables = strings.Fields(`buf conn read write parse node tree item list map key val port host
user auth token cache store load save sync lock queue task job work pool file path dir name size
count index line text byte word char scan lex emit send recv chan time span trace log meta data info
conf opt flag mode state event hook rule match glob walk seek peek push pop head tail next prev first
last min max sum rate limit retry wait done stop start init open close flush reset clear merge split
join trim pad wrap encode decode hash sign verify check valid error fault warn debug frame packet
stream block chunk page row col table field record entry value result status code reply request
session client server handler router route query filter sort group order batch shard region zone`)

func word(r *rand.Rand) string { return syllables[r.IntN(len(syllables))] }

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// camel is an identifier of one to three syllables; rarely one with digits
// inside, like Token42Xyz.
func camel(r *rand.Rand, exported bool) string {
	var b strings.Builder
	n := 1 + r.IntN(3)
	for i := range n {
		w := word(r)
		if i > 0 || exported {
			w = title(w)
		}
		b.WriteString(w)
	}
	if r.IntN(20000) == 0 {
		fmt.Fprintf(&b, "%d%s", 10+r.IntN(990), title(word(r)))
	}
	return b.String()
}

func snake(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = word(r)
	}
	return strings.Join(parts, "_")
}

func sentence(r *rand.Rand, words int) string {
	parts := make([]string, words)
	for i := range parts {
		parts[i] = word(r)
	}
	parts[0] = title(parts[0])
	return strings.Join(parts, " ") + "."
}

// planted decides, once per file, which of the searched-for strings it
// holds.
type planted struct {
	eof, deprecated, date bool
}

func plant(r *rand.Rand) planted {
	return planted{eof: r.IntN(90) == 0, deprecated: r.IntN(110) == 0, date: r.IntN(60) == 0}
}

// maybe is true with probability 1/n.
func maybe(r *rand.Rand, n int) bool { return r.IntN(n) == 0 }

func goFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "// Copyright 2024 The Example Authors. All rights reserved.\n\n// Package %s %s\npackage %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"io\"\n)\n\n", word(r), sentence(r, 8), word(r))
	for b.Len() < size {
		typ := camel(r, true)
		fmt.Fprintf(&b, "// %s %s\ntype %s struct {\n", typ, sentence(r, 6+r.IntN(8)), typ)
		for range 2 + r.IntN(5) {
			fmt.Fprintf(&b, "\t%s %s // %s\n", camel(r, false), pick(r, []string{"int", "string", "[]byte", "*" + typ, "map[string]int", "error", "context.Context"}), sentence(r, 4))
		}
		b.WriteString("}\n\n")
		for range 1 + r.IntN(4) {
			name := camel(r, true)
			if maybe(r, 1500) {
				name = "Read" + title(word(r))
			}
			recv := strings.ToLower(typ[:1])
			if p.deprecated && maybe(r, 6) {
				fmt.Fprintf(&b, "// %s %s\n//\n// %s: use %s instead.\n", name, sentence(r, 8), pick(r, []string{"Deprecated", "Deprecated", "DEPRECATED"}), camel(r, true))
			} else {
				fmt.Fprintf(&b, "// %s %s\n", name, sentence(r, 6+r.IntN(10)))
			}
			fmt.Fprintf(&b, "func (%s *%s) %s(ctx context.Context, %s []byte) (int, error) {\n", recv, typ, name, camel(r, false))
			for range 2 + r.IntN(6) {
				v := camel(r, false)
				switch r.IntN(6) {
				case 0:
					fmt.Fprintf(&b, "\tif %s.%s == nil {\n\t\treturn 0, errors.New(%q)\n\t}\n", recv, camel(r, false), strings.ToLower(sentence(r, 4)))
				case 1:
					fmt.Fprintf(&b, "\tfor i := range %s.%s {\n\t\t%s.%s(i, %s)\n\t}\n", recv, camel(r, false), recv, camel(r, true), camel(r, false))
				case 2:
					if p.eof && maybe(r, 4) {
						fmt.Fprintf(&b, "\tif len(%s) < %d {\n\t\treturn 0, io.ErrUnexpectedEOF\n\t}\n", camel(r, false), r.IntN(64))
					} else {
						fmt.Fprintf(&b, "\t%s := fmt.Sprintf(\"%%s: %%d\", %s.%s, %d)\n\t_ = %s\n", v, recv, camel(r, false), r.IntN(1000), v)
					}
				case 3:
					fmt.Fprintf(&b, "\t// %s\n", sentence(r, 5+r.IntN(10)))
				case 4:
					if p.date && maybe(r, 5) {
						fmt.Fprintf(&b, "\t// Changed on %d-%02d-%02d.\n", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
					} else {
						fmt.Fprintf(&b, "\t%s, err := %s.%s(ctx)\n\tif err != nil {\n\t\treturn 0, fmt.Errorf(\"%s: %%w\", err)\n\t}\n\t_ = %s\n", v, recv, camel(r, true), snake(r), v)
					}
				default:
					fmt.Fprintf(&b, "\t%s.%s += len(%s)\n", recv, camel(r, false), camel(r, false))
				}
			}
			b.WriteString("\treturn 0, nil\n}\n\n")
		}
	}
	return []byte(b.String())
}

func pyFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "\"\"\"%s\"\"\"\n\nimport os\nimport sys\nfrom typing import Any, Optional\n\n", sentence(r, 10))
	for b.Len() < size {
		cls := camel(r, true)
		fmt.Fprintf(&b, "\nclass %s:\n    \"\"\"%s\"\"\"\n\n    def __init__(self, %s: int = %d) -> None:\n        self.%s = %s\n", cls, sentence(r, 8), snake(r), r.IntN(100), snake(r), snake(r))
		for range 1 + r.IntN(4) {
			fmt.Fprintf(&b, "\n    def %s(self, %s: Optional[str] = None) -> Any:\n", snake(r), snake(r))
			if p.deprecated && maybe(r, 5) {
				fmt.Fprintf(&b, "        warnings.warn(\"%s is deprecated\", DeprecationWarning)\n", snake(r))
			}
			for range 2 + r.IntN(5) {
				switch r.IntN(4) {
				case 0:
					fmt.Fprintf(&b, "        if self.%s is None:\n            raise ValueError(%q)\n", snake(r), strings.ToLower(sentence(r, 4)))
				case 1:
					fmt.Fprintf(&b, "        for %s in self.%s:\n            self.%s(%s)\n", snake(r), snake(r), snake(r), snake(r))
				case 2:
					if p.eof && maybe(r, 4) {
						b.WriteString("        raise EOFError(\"ErrUnexpectedEOF\")\n")
					} else {
						fmt.Fprintf(&b, "        # %s\n", sentence(r, 6+r.IntN(8)))
					}
				default:
					fmt.Fprintf(&b, "        %s = self.%s(%d, %s)\n", snake(r), snake(r), r.IntN(100), snake(r))
				}
			}
			b.WriteString("        return None\n")
		}
	}
	return []byte(b.String())
}

func jsFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "'use strict';\n\n/** %s */\nconst %s = require('./%s');\n\n", sentence(r, 9), camel(r, false), word(r))
	for b.Len() < size {
		fmt.Fprintf(&b, "/**\n * %s\n * @param {string} %s\n */\nexport function %s(%s, %s) {\n", sentence(r, 10), camel(r, false), camel(r, false), camel(r, false), camel(r, false))
		if p.deprecated && maybe(r, 5) {
			fmt.Fprintf(&b, "  console.warn('%s is Deprecated');\n", camel(r, false))
		}
		for range 2 + r.IntN(6) {
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "  if (!%s.%s) {\n    throw new Error('%s');\n  }\n", camel(r, false), camel(r, false), strings.ToLower(sentence(r, 4)))
			case 1:
				fmt.Fprintf(&b, "  for (const %s of %s) {\n    %s.push(%s);\n  }\n", camel(r, false), camel(r, false), camel(r, false), camel(r, false))
			case 2:
				if p.eof && maybe(r, 4) {
					b.WriteString("  if (offset > buffer.length) throw new ErrUnexpectedEOF(offset);\n")
				} else {
					fmt.Fprintf(&b, "  // %s\n", sentence(r, 6+r.IntN(8)))
				}
			default:
				fmt.Fprintf(&b, "  const %s = await %s.%s(%d);\n", camel(r, false), camel(r, false), camel(r, false), r.IntN(1000))
			}
		}
		b.WriteString("  return null;\n}\n\n")
	}
	return []byte(b.String())
}

func mdFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "# %s\n\n", title(word(r)+" "+word(r)))
	for b.Len() < size {
		fmt.Fprintf(&b, "## %s\n\n", title(snake(r)))
		for range 2 + r.IntN(4) {
			for range 3 + r.IntN(5) {
				b.WriteString(sentence(r, 6+r.IntN(10)))
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		if p.date && maybe(r, 3) {
			fmt.Fprintf(&b, "Released %d-%02d-%02d.\n\n", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
		}
		if p.deprecated && maybe(r, 3) {
			b.WriteString("> **Deprecated**: this section describes the old behaviour.\n\n")
		}
		if p.eof && maybe(r, 3) {
			b.WriteString("A short read returns `io.ErrUnexpectedEOF`.\n\n")
		}
		fmt.Fprintf(&b, "```go\n%s, err := %s.%s(ctx)\n```\n\n", camel(r, false), word(r), camel(r, true))
	}
	return []byte(b.String())
}

func jsonFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	b.WriteString("[\n")
	for b.Len() < size {
		rec := map[string]any{
			"id":     r.IntN(1 << 30),
			"name":   snake(r),
			"kind":   word(r),
			"tags":   []string{word(r), word(r)},
			"weight": float64(r.IntN(100000)) / 100,
			"note":   sentence(r, 5+r.IntN(6)),
		}
		if p.date && maybe(r, 20) {
			rec["updated"] = fmt.Sprintf("%d-%02d-%02d", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
		}
		if p.deprecated && maybe(r, 30) {
			rec["status"] = "deprecated"
		}
		line, _ := json.Marshal(rec)
		b.WriteString("  ")
		b.Write(line)
		b.WriteString(",\n")
	}
	b.WriteString("  {}\n]\n")
	return []byte(b.String())
}

// binaryFile is a PNG-like file: a header, NUL bytes early on, and noise
// that holds some of the searched-for strings, which a search must not
// report.
func binaryFile(r *rand.Rand, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	for _, s := range []string{"io.ErrUnexpectedEOF", "deprecated", "func (r *T) ReadAll("} {
		at := 16<<10 + r.IntN(size-(16<<10)-64)
		copy(b[at:], s)
	}
	return b
}
