package permission

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The differential fuzzer: command lines are judged by the checker (under
// the variants of diffVariants) and, when a variant allows one, run in real
// bash (runInBash). A line that was allowed and left a trace it must not
// (any change to the files for the read-only variants, a call of a denied
// program for the variant where Bash is allowed) is a bypass: the checker
// and bash read the text differently.
var (
	diffN     = flag.Int("difffuzz.n", 0, "random lines for TestDifferential (0: as many as fit in -difffuzz.time)")
	diffTime  = flag.Duration("difffuzz.time", 20*time.Second, "time budget of the random lines of TestDifferential")
	diffSeed  = flag.Int64("difffuzz.seed", 0, "seed of the generator (0: from the clock)")
	diffOut   = flag.String("difffuzz.out", "", "file that findings are appended to, one quoted line each")
	diffForce = flag.Bool("difffuzz.forceallow", false, "mutation check: treat every line as allowed (the test must fail)")
	diffExtra = flag.String("difffuzz.extra", "", "file of more quoted lines for TestDifferential (as the corpus, but they need not leave a trace)")
	diffProbe = flag.Float64("difffuzz.probe", 0.03, "share of refused lines run anyway to measure how often markers run")
)

// loadDiffCorpus reads testdata/difffuzz/*.txt: one command line per line,
// written as a Go or JSON quoted string; blank lines and lines starting
// with '#' are skipped.
func loadDiffCorpus(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "difffuzz", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return loadDiffLines(t, files)
}

func loadDiffLines(t testing.TB, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			l := strings.TrimSpace(sc.Text())
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			s, err := strconv.Unquote(l)
			if err != nil {
				t.Fatalf("%s:%d: not a quoted string: %v", f, n, err)
			}
			out = append(out, s)
		}
	}
	return out
}

func jsonCommand(cmd string) (json.RawMessage, error) {
	b, err := json.Marshal(map[string]string{"command": cmd})
	if err != nil {
		return nil, fmt.Errorf("encode command: %w", err)
	}
	return b, nil
}

// asSent returns the command as the checker receives it through JSON
// (invalid UTF-8 replaced), which is also what bash must run.
func asSent(cmd string) string {
	if utf8.ValidString(cmd) {
		return cmd
	}
	b, _ := json.Marshal(cmd)
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

// diffStats counts what a differential run did.
type diffStats struct {
	lines, allowed, ran, effects, probes, probeEffects, bypasses int
	perVariant                                                   []int
}

func (s *diffStats) String() string {
	var pv []string
	for i, v := range diffVariants {
		pv = append(pv, fmt.Sprintf("%s %d", v.name, s.perVariant[i]))
	}
	return fmt.Sprintf("%d lines, %d allowed by some variant (%s), %d run in bash (%d with an effect), "+
		"%d refused lines probed (%d ran a marker), %d bypasses", s.lines, s.allowed, strings.Join(pv, ", "),
		s.ran, s.effects, s.probes, s.probeEffects, s.bypasses)
}

// diffCheck judges one line and, if some variant allows it (or probe is
// set), runs it. It returns a description of the bypass, if any, and what
// the run did (nothing if it did not run).
func diffCheck(j *diffJudge, dir, cmd string, probe bool, st *diffStats) (string, diffRun, error) {
	cmd = asSent(cmd)
	st.lines++
	allowed := j.allowed(cmd)
	for _, i := range allowed {
		st.perVariant[i]++
	}
	if len(allowed) == 0 && !probe {
		return "", diffRun{}, nil
	}
	r, err := runInBash(dir, cmd)
	if err != nil {
		return "", r, err
	}
	if len(allowed) == 0 {
		st.probes++
		if r.effect() {
			st.probeEffects++
		}
		return "", r, nil
	}
	st.allowed++
	st.ran++
	if r.effect() {
		st.effects++
	}
	if by := bypass(allowed, r); len(by) > 0 {
		st.bypasses++
		return fmt.Sprintf("BYPASS under %s: %q: %s", strings.Join(by, ", "), cmd, r), r, nil
	}
	return "", r, nil
}

func diffPrereq(t testing.TB) {
	t.Helper()
	if _, err := findBash(); err != nil {
		t.Skipf("the differential fuzzer needs bash: %v", err)
	}
}

func recordFinding(t testing.TB, cmd string) {
	if *diffOut == "" {
		return
	}
	f, err := os.OpenFile(*diffOut, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("record finding: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strconv.Quote(cmd))
}

// TestDifferential runs the committed corpus and then random lines from
// the grammar (bounded by -difffuzz.n and -difffuzz.time) through the
// checker and real bash. Every corpus line is also run regardless of the
// decision, and must leave a trace: a regression case that cannot fail
// proves nothing.
func TestDifferential(t *testing.T) {
	diffPrereq(t)
	dir := t.TempDir()
	j, err := newDiffJudge(dir, *diffForce)
	if err != nil {
		t.Fatal(err)
	}
	st := &diffStats{perVariant: make([]int, len(diffVariants))}
	corpus := loadDiffCorpus(t)
	if len(corpus) < 20 {
		t.Fatalf("the corpus has %d lines, want at least 20", len(corpus))
	}
	for _, cmd := range corpus {
		msg, r, err := diffCheck(j, dir, cmd, true, st)
		if err != nil {
			t.Fatal(err)
		}
		if msg != "" {
			t.Error("corpus: " + msg)
		}
		if !r.effect() {
			t.Errorf("corpus line %q leaves no trace in bash (output %q): it cannot catch a bypass", cmd, r.output)
		}
	}
	t.Logf("corpus: %s", st)
	if *diffExtra != "" {
		est := &diffStats{perVariant: make([]int, len(diffVariants))}
		for _, cmd := range loadDiffLines(t, []string{*diffExtra}) {
			msg, r, err := diffCheck(j, dir, cmd, true, est)
			if err != nil {
				t.Fatal(err)
			}
			if msg != "" {
				t.Error("extra: " + msg)
			}
			if testing.Verbose() {
				t.Logf("extra %q: allowed by %v, %s", cmd, j.allowed(asSent(cmd)), r)
			}
		}
		t.Logf("extra: %s", est)
	}

	seed := *diffSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	budget := *diffTime
	if testing.Short() && budget > 3*time.Second {
		budget = 3 * time.Second
	}
	g := newDiffGen(seed)
	rst := &diffStats{perVariant: make([]int, len(diffVariants))}
	deadline := time.Now().Add(budget)
	probeEvery := 0
	if *diffProbe > 0 {
		probeEvery = int(1 / *diffProbe)
	}
	for n := 0; ; n++ {
		if *diffN > 0 && n >= *diffN || *diffN == 0 && time.Now().After(deadline) {
			break
		}
		cmd := g.line()
		msg, _, err := diffCheck(j, dir, cmd, probeEvery > 0 && n%probeEvery == 0, rst)
		if err != nil {
			t.Fatal(err)
		}
		if msg != "" {
			t.Errorf("seed %d, line %d: %s", seed, n, msg)
			recordFinding(t, cmd)
		}
	}
	t.Logf("random (seed %d, %s): %s", seed, budget, rst)
	if diffSandboxNote != "" {
		t.Log(diffSandboxNote)
	}
}

// TestDifferentialCatchesForcedAllow is the mutation check of the
// harness: with a checker that allows everything, every corpus line must
// be reported as a bypass under the read-only variants, and the lines that
// call touch or mkdir under the variant where Bash is allowed.
func TestDifferentialCatchesForcedAllow(t *testing.T) {
	diffPrereq(t)
	dir := t.TempDir()
	j, err := newDiffJudge(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	st := &diffStats{perVariant: make([]int, len(diffVariants))}
	corpus := loadDiffCorpus(t)
	caught := 0
	for _, cmd := range corpus {
		msg, _, err := diffCheck(j, dir, cmd, false, st)
		if err != nil {
			t.Fatal(err)
		}
		if msg == "" {
			t.Errorf("forced allow: %q is not reported", cmd)
			continue
		}
		caught++
	}
	if caught != len(corpus) {
		t.Errorf("forced allow: %d of %d corpus lines reported", caught, len(corpus))
	}
	t.Logf("forced allow: %s", st)
}

// FuzzDifferential is the native fuzz target: go test -fuzz=FuzzDifferential
// -fuzztime=10m. The seeds are the corpus and generated lines.
func FuzzDifferential(f *testing.F) {
	diffPrereq(f)
	for _, c := range loadDiffCorpus(f) {
		f.Add(c)
	}
	g := newDiffGen(1)
	for i := 0; i < 50; i++ {
		f.Add(g.line())
	}
	dir := f.TempDir()
	j, err := newDiffJudge(dir, *diffForce)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 {
			return
		}
		st := &diffStats{perVariant: make([]int, len(diffVariants))}
		msg, _, err := diffCheck(j, dir, cmd, false, st)
		if err != nil {
			t.Fatal(err)
		}
		if msg != "" {
			t.Fatal(msg)
		}
	})
}
