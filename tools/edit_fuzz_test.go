package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEditReplace checks Edit's matching and replacement against
// strings.Replace (and, for whole-line deletions, against a regexp that
// states the rule independently), then runs the tool itself on a file.
func FuzzEditReplace(f *testing.F) {
	for _, seed := range []struct {
		text, old, new string
		all            bool
	}{
		{"color = red\nsize = 3\n", "color = red", "color = blue", false},
		{"aaa", "a", "b", true},
		{"aaaa", "aa", "a", true},
		{"x\ny\nx\n", "x", "", true},
		{"one\r\ntwo\r\n", "one\ntwo", "1\n2", false},
		{"a\r\nb", "a\r\nb", "c", false},
		{"keep\n\tdrop()\nkeep\n", "\tdrop()", "", false},
		{"\xff\xfe\x00", "\x00", "y", false},
		{"\xEF\xBB\xBFbom\n", "bom", "mob", false},
		{"\xe60", "0", "\xe6", false},
	} {
		f.Add(seed.text, seed.old, seed.new, seed.all)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "fuzz.txt")
	f.Fuzz(func(t *testing.T, text, old, new string, all bool) {
		if old == "" {
			return
		}
		o, n, count := findEdit(text, old, new)
		if count != strings.Count(text, o) {
			t.Fatalf("findEdit count %d, strings.Count %d", count, strings.Count(text, o))
		}
		if count == 0 {
			if strings.Contains(text, old) {
				t.Fatalf("findEdit missed %q in %q", old, text)
			}
			return
		}
		if !strings.Contains(text, o) {
			t.Fatalf("findEdit returned %q, not in %q", o, text)
		}
		got := replaceOccurrences(text, o, n, all)
		if want := ftOracleReplace(text, o, n, all); got != want {
			t.Fatalf("replaceOccurrences(%q, %q, %q, %v) = %q, want %q", text, o, n, all, got, want)
		}

		// The tool, on plain text (no CR, BOM or NUL, which the cases
		// above and the golden tests cover).
		// JSON cannot carry invalid UTF-8 in old_string and new_string.
		if !utf8.ValidString(old) || !utf8.ValidString(new) {
			return
		}
		if strings.ContainsAny(text+old+new, "\r\x00") || strings.HasPrefix(text, "\uFEFF") ||
			bytes.HasPrefix([]byte(text), bomUTF16LE) || bytes.HasPrefix([]byte(text), bomUTF16BE) {
			return
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := ftRun(t, Edit(), ftEnv(dir), map[string]any{"file_path": path, "old_string": old, "new_string": new, "replace_all": all})
		data, _ := os.ReadFile(path)
		switch {
		case old == new:
			if !r.IsError || string(data) != text {
				t.Fatalf("old == new: error %v, file %q", r.IsError, data)
			}
		case count > 1 && !all:
			if !r.IsError || !strings.Contains(ftText(r), "Found ") || string(data) != text {
				t.Fatalf("ambiguous edit: %q, file %q", ftText(r), data)
			}
		default:
			if r.IsError || string(data) != got {
				t.Fatalf("Edit: %q (error %v), file %q, want %q", ftText(r), r.IsError, data, got)
			}
			res := r.Structured.(EditResult)
			if back, ok := applyHunks(*res.OriginalFile, res.StructuredPatch); !ok || back != got {
				t.Fatalf("structuredPatch does not turn %q into %q: %q %v", *res.OriginalFile, got, back, ok)
			}
		}
	})
}

// ftOracleReplace is strings.Replace, except that deleting text that starts a
// line and neither starts nor ends with a line break also deletes the line
// break after it. It works on the pieces between occurrences.
func ftOracleReplace(text, old, new string, all bool) string {
	n := 1
	if all {
		n = -1
	}
	if new != "" || strings.HasPrefix(old, "\n") || strings.HasPrefix(old, "\r") ||
		strings.HasSuffix(old, "\n") || strings.HasSuffix(old, "\r") {
		return strings.Replace(text, old, new, n)
	}
	parts := strings.Split(text, old)
	if !all {
		parts = strings.SplitN(text, old, 2)
	}
	out := parts[0]
	for i := 1; i < len(parts); i++ {
		prev, p := parts[i-1], parts[i]
		if strings.HasSuffix(prev, "\n") || (i == 1 && prev == "") {
			if rest, ok := strings.CutPrefix(p, "\r\n"); ok {
				p = rest
			} else {
				p = strings.TrimPrefix(p, "\n")
			}
		}
		out += p
	}
	return out
}
