package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLines: reading any bytes as a transcript never fails or
// panics; every non-blank line is either an entry or a skipped line; the
// warnings never name Go types; the chain is made of entries read; and
// where no line is malformed the strict reader of the stores agrees.
func FuzzParseLines(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("garbage\n{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":\"b\"}\n"))
	f.Add([]byte(`{"type":"user","uuid":"b","parentUuid":"a","message":"x"}` + "\n" + `{"type":"user","uuid":"a","parentUuid":"b"}` + "\n"))
	f.Add([]byte(`{"type":"assistant","uuid":"c","message":{"content":[{"type":"text","text":1}]}}` + "\n[1]\n{\"type\":5}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := readLines(data, "f.jsonl")
		nonBlank := 0
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) > 0 {
				nonBlank++
			}
		}
		if len(l.entries)+l.skipped != nonBlank {
			t.Fatalf("%d entries + %d skipped, want %d lines", len(l.entries), l.skipped, nonBlank)
		}
		if l.skipped > 0 && len(l.warnings) == 0 {
			t.Fatal("lines skipped without a warning")
		}
		for _, w := range l.warnings {
			if !strings.HasPrefix(w, "f.jsonl:") || strings.Contains(w, "Go ") || strings.Contains(w, "json.") {
				t.Fatalf("warning %q", w)
			}
		}
		tr := buildTranscript(l.entries, l.bridge)
		if len(tr.Chain) > len(l.entries) {
			t.Fatalf("chain of %d from %d entries", len(tr.Chain), len(l.entries))
		}
		tr.History()
		if l.skipped == 0 {
			strict, _, err := parseLines(data, "f.jsonl")
			if err != nil || len(strict) != len(l.entries) {
				t.Fatalf("strict reader: %d entries, %v; lenient: %d", len(strict), err, len(l.entries))
			}
		}
	})
}

// TestOpenReadsDamaged: Open skips a malformed line in the middle (and
// leaves it in the file), drops a cut final line as the lock's holder,
// names both in its Transcript's Warnings, and continues the chain across
// the gap.
func TestOpenReadsDamaged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.jsonl")
	body := `{"type":"user","uuid":"u1","message":{"role":"user","content":"one"}}` + "\n" +
		"not json\n" +
		`{"type":"assistant","uuid":"a1","parentUuid":"lost","message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}` + "\n"
	if err := os.WriteFile(p, []byte(body+`{"type":"user","uuid":"u2","par`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Open(p, Envelope{SessionID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr := w.Transcript()
	if len(tr.Warnings) != 2 || !strings.HasPrefix(tr.Warnings[0], p+":2: skipped a malformed line: not valid JSON") ||
		!strings.HasPrefix(tr.Warnings[1], p+":4: skipped the final line") {
		t.Errorf("warnings %q", tr.Warnings)
	}
	if len(tr.Chain) != 2 || w.Leaf() != "a1" {
		t.Errorf("chain of %d, leaf %q; want u1, a1", len(tr.Chain), w.Leaf())
	}
	if after, _ := os.ReadFile(p); string(after) != body {
		t.Errorf("after Open the file is %q, want the cut line dropped and the rest as it was", after)
	}
}
