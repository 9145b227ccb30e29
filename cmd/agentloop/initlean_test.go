package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// maxInitAllocs bounds the allocations agentloop's own packages make when
// the process starts (package-level variables and init functions), before
// main runs. Every run of the CLI pays them, most of which need none of
// it: tables and regular expressions are built when first used instead.
// The packages made 2,768 allocations (307 KB) before that; about 680
// now.
const maxInitAllocs = 1000

// TestStartupInitIsLean runs the command with the runtime's init trace and
// adds up the allocations of agentloop's packages.
func TestStartupInitIsLean(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--version")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("--version: %v\n%s", err, stderr.Bytes())
	}
	type pkgInit struct {
		name   string
		allocs int
	}
	var inits []pkgInit
	total := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init <package> @<t> ms, <t> ms clock, <n> bytes, <n> allocs
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		name := f[1]
		if !strings.HasPrefix(name, "github.com/agentloop/agentloop") || strings.Contains(name, "agentlooptest") {
			continue // the test binary also links the test double
		}
		var n int
		if _, err := fmt.Sscan(f[9], &n); err != nil {
			t.Fatalf("reading %q: %v", sc.Text(), err)
		}
		inits = append(inits, pkgInit{name, n})
		total += n
	}
	if len(inits) == 0 {
		t.Fatalf("no init trace of agentloop's packages in:\n%s", stderr.Bytes())
	}
	if total > maxInitAllocs {
		sort.Slice(inits, func(i, j int) bool { return inits[i].allocs > inits[j].allocs })
		t.Errorf("agentloop's packages allocate %d times at start-up, want at most %d; the most: %v", total, maxInitAllocs, inits[:min(5, len(inits))])
	}
}
