package wire

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs; run go test -run %s -update and review the diff.\ngot:\n%s", path, t.Name(), got)
	}
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// describe is a message's Go type, with its body's for a control request.
func describe(m Message) string {
	s := fmt.Sprintf("%T", m)
	if r, ok := m.(*ControlRequest); ok {
		s += fmt.Sprintf(" %T", r.Request)
	}
	return s
}

// TestGoldenLines: every host and engine line recorded in
// wire-protocol.md (spec_lines), and one of each other shape (more_lines),
// decodes to its type, and encodes back to the same members.
func TestGoldenLines(t *testing.T) {
	for _, name := range []string{"spec_lines", "more_lines"} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			for _, line := range readLines(t, name+".jsonl") {
				m, err := Decode([]byte(line))
				if err != nil {
					t.Errorf("%s: %v", line, err)
					continue
				}
				enc, err := Encode(m)
				if err != nil {
					t.Errorf("%s: encode: %v", line, err)
					continue
				}
				if !sameJSON(t, []byte(line), enc) {
					t.Errorf("encoding changed the line:\n in: %s\nout: %s", line, enc)
				}
				fmt.Fprintf(&out, "in:  %s\ngo:  %s\nout: %s\n", line, describe(m), enc)
			}
			golden(t, name+".golden", out.Bytes())
		})
	}
}

// TestGoldenErrors: each malformed line of bad_lines is an error that
// names its fault; the golden file shows the messages.
func TestGoldenErrors(t *testing.T) {
	var out bytes.Buffer
	for _, line := range readLines(t, "bad_lines.jsonl") {
		m, err := Decode([]byte(line))
		if err == nil {
			t.Errorf("%s: decoded as %s, want an error", line, describe(m))
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: error %T, want *DecodeError", line, err)
		}
		if !strings.HasPrefix(err.Error(), "wire: ") {
			t.Errorf("%s: error %q lacks the package prefix", line, err)
		}
		fmt.Fprintf(&out, "in:  %s\nerr: %v\n", line, err)
	}
	golden(t, "bad_lines.golden", out.Bytes())
}
