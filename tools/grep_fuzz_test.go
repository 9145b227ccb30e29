package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzGrepOptions runs Grep with arbitrary patterns and options over a small
// tree: it must never panic, and must always say something.
func FuzzGrepOptions(f *testing.F) {
	f.Add("TODO", uint8(0), uint8(0), int16(0), int16(0), int16(-1), int16(0), "", "")
	f.Add(`func \w+`, uint8(1), uint8(1), int16(1), int16(2), int16(250), int16(0), "*.go", "go")
	f.Add(`(?s)a.*b`, uint8(2), uint8(7), int16(-3), int16(99), int16(0), int16(5), "!*.md,*.{go,txt}", "md")
	f.Add(`^$`, uint8(1), uint8(4), int16(0), int16(0), int16(1), int16(1), "**/x", "")
	f.Add(`\n`, uint8(1), uint8(8), int16(0), int16(0), int16(1), int16(1), "{", "nope")
	f.Add(`x*`, uint8(1), uint8(2), int16(5), int16(5), int16(3), int16(2), "", "")
	f.Add(`[`, uint8(0), uint8(0), int16(0), int16(0), int16(0), int16(0), "", "")

	dir := f.TempDir()
	for _, file := range [][2]string{
		{"a.go", "package a\n\nfunc A() {}\n// TODO\n"},
		{"b.txt", "alpha\r\nbeta\r\n\r\n"},
		{"c.md", ""},
		{"d/e.go", "x\ny\nx"},
		{"d/f.bin", "\x00\x01"},
		{"d/g.txt", "\xff\xfe invalid \xc3\n\n\n"},
		{".gitignore", "d/g.txt\n"},
		{".ignore", "*.nope\n"},
	} {
		ftWriteFile(f, dir, file[0], file[1])
	}
	modes := []string{"files_with_matches", "content", "count"}
	f.Fuzz(func(t *testing.T, pattern string, mode, flags uint8, before, after, limit, offset int16, glob, typ string) {
		// The literal prefilter and the automaton never change what
		// matches: the regexp run over the whole text decides.
		if m, err := newGrepMatcher(pattern, flags&1 != 0, flags&8 != 0); err == nil {
			for _, data := range []string{
				pattern, glob + "\n" + pattern + "\n", typ, "a\nB\n\nſK\n",
				"x" + pattern + "y\n\n" + strings.ToUpper(pattern) + "\r\n" + glob + pattern + typ,
				"\xff" + strings.ToLower(pattern) + "\x00é\n" + pattern[min(1, len(pattern)):],
			} {
				want := m.re.FindAllIndex([]byte(data), -1)
				if len(want) > 0 && phantom([]byte(data), want[len(want)-1][0]) {
					want = want[:len(want)-1]
				}
				if got := m.matches([]byte(data), false); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
					t.Fatalf("pattern %q on %q: found %v, the regexp finds %v", pattern, data, got, want)
				}
				if got := m.matches([]byte(data), true); !cmp.Equal(got, want[:min(1, len(want))], cmpopts.EquateEmpty()) {
					t.Fatalf("pattern %q on %q: first match %v, the regexp finds %v", pattern, data, got, want)
				}
			}
		}
		in := map[string]any{"pattern": pattern, "output_mode": modes[int(mode)%3]}
		if flags&1 != 0 {
			in["-i"] = true
		}
		if flags&2 != 0 {
			in["-o"] = true
		}
		if flags&4 != 0 {
			in["-n"] = false
		}
		if flags&8 != 0 {
			in["multiline"] = true
		}
		if flags&16 != 0 {
			in["path"] = "d"
		}
		if flags&32 != 0 {
			in["path"] = filepath.Join(dir, "a.go")
		}
		if flags&64 != 0 {
			in["context"] = int(before)
		} else {
			in["-B"], in["-A"] = int(before), int(after)
		}
		if limit >= 0 {
			in["head_limit"] = int(limit)
		}
		in["offset"] = int(offset)
		if glob != "" {
			in["glob"] = glob
		}
		if typ != "" {
			in["type"] = typ
		}
		r := ftRun(t, Grep(), ftEnv(dir), in)
		text := ftText(r)
		if text == "" && (r.IsError || in["output_mode"] != "content") {
			t.Fatalf("empty result for %v: %+v", in, r)
		}
		if !r.IsError && r.Structured == nil {
			t.Fatalf("no tool_use_result for %v", in)
		}
		if !r.IsError && in["output_mode"] == "files_with_matches" &&
			!strings.HasPrefix(text, "Found ") && text != "No files found" {
			t.Fatalf("files mode said %q", text)
		}
	})
}
