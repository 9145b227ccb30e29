package main

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flagRow is one row of the table of docs/interop.md, "Command-line
// flags".
type flagRow struct {
	names   []string // the Flag cell: the flag and its aliases
	ref     string   // help, hidden or agentloop
	example []string // the flag as given, then the context it needs
	verdict string   // honoured, warned, refused or no-op
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// readFlagTable parses the table of docs/interop.md.
func readFlagTable(t *testing.T) []flagRow {
	t.Helper()
	f, err := os.Open("../../docs/interop.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []flagRow
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Command-line flags"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("table row with %d cells, want 5: %s", len(cells), line)
		}
		var r flagRow
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			r.names = append(r.names, m[1])
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
			r.example = append(r.example, m[1])
		}
		r.ref, r.verdict = strings.TrimSpace(cells[1]), strings.TrimSpace(cells[3])
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal(`docs/interop.md has no "Command-line flags" table`)
	}
	return rows
}

// referenceHelpFlags is the list of testdata/reference-help-flags.txt.
func referenceHelpFlags(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/reference-help-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestFlagTable holds the command line to the table of docs/interop.md:
// every flag of the reference's --help and every flag agentloop defines
// is a row, every row's names are one flag here, and each row's example
// is honoured (the parsed command line changes, no warning names it),
// warned (a warning names it), refused (an "is not supported yet" error
// naming it) or a no-op (nothing changes, no warning), as the row says.
func TestFlagTable(t *testing.T) {
	rows := readFlagTable(t)
	inTable := map[string]string{} // name -> ref column
	for _, r := range rows {
		for _, n := range r.names {
			if _, dup := inTable[n]; dup {
				t.Errorf("%s is in two rows", n)
			}
			inTable[n] = r.ref
		}
	}
	var helpRows []string
	for n, ref := range inTable {
		if ref == "help" {
			helpRows = append(helpRows, n)
		}
	}
	want := referenceHelpFlags(t)
	slices.Sort(want)
	slices.Sort(helpRows)
	if diff := cmp.Diff(want, helpRows); diff != "" {
		t.Errorf("the rows marked help are not the reference's --help flags (-reference +table):\n%s", diff)
	}
	for _, defs := range [][]flagDef{flagDefs, sdkFlagDefs, refFlagDefs} {
		for _, d := range defs {
			for _, n := range d.names {
				if _, ok := inTable[n]; !ok {
					t.Errorf("%s is defined but has no row in docs/interop.md", n)
				}
			}
		}
	}
	for _, r := range rows {
		t.Run(r.names[0], func(t *testing.T) { checkFlagRow(t, r) })
	}
}

// checkFlagRow runs one row's example.
func checkFlagRow(t *testing.T, r flagRow) {
	if len(r.example) == 0 {
		t.Fatal("the row has no example")
	}
	flag, _, _ := strings.Cut(r.example[0], "=")
	def := lookupFlag(flag)
	if def == nil {
		t.Fatalf("%s is in the table but agentloop does not know it", flag)
	}
	for _, n := range r.names {
		if lookupFlag(n) != def {
			t.Errorf("%s is not another name of %s", n, flag)
		}
	}
	if !slices.Contains(r.names, flag) {
		t.Errorf("the example's flag %s is not one of the row's names %v", flag, r.names)
	}
	if !slices.Contains([]string{"help", "hidden", "agentloop"}, r.ref) {
		t.Errorf("Reference column %q: want help, hidden or agentloop", r.ref)
	}
	context := r.example[1:]
	base, err := parseArgs(context)
	if err != nil {
		t.Fatalf("the context %q alone: %v", context, err)
	}
	got, err := parseArgs(r.example)
	warned := got != nil && slices.ContainsFunc(got.warnings, func(w string) bool { return strings.Contains(w, flag) })
	switch r.verdict {
	case "honoured", "no-op":
		if err != nil {
			t.Fatalf("%q: %v", r.example, err)
		}
		if warned {
			t.Errorf("%q warns: %q", r.example, got.warnings)
		}
		changed := !reflect.DeepEqual(base, got)
		if r.verdict == "honoured" && !changed {
			t.Errorf("%q changes nothing in the parsed command line", r.example)
		}
		if r.verdict == "no-op" && changed {
			t.Errorf("%q changes the parsed command line", r.example)
		}
	case "warned":
		if err != nil {
			t.Fatalf("%q: %v", r.example, err)
		}
		if !warned {
			t.Errorf("%q: no warning names %s (warnings %q)", r.example, flag, got.warnings)
		}
	case "refused":
		if !errors.Is(err, errUnsupported) || !strings.Contains(err.Error(), flag) {
			t.Errorf("%q: error %v, want one that says %s is not supported yet", r.example, err, flag)
		}
	default:
		t.Errorf("agentloop column %q: want honoured, warned, refused or no-op", r.verdict)
	}
}
