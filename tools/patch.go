package tools

import "strings"

// Hunk is one hunk of a unified line diff, as Write and Edit report it in
// structuredPatch. Lines start with ' ' (context), '-' (removed) or '+'
// (added); a line "\ No newline at end of file" follows a line that ends its
// file without a line break. Starts are 1-based; when a side has no lines,
// its start is the line before the hunk (0 at the top of a file), as in
// unified diffs.
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

const (
	patchContext = 3
	// diffMaxEdits bounds the work of the line diff. Past it the differing
	// middle of the two texts is reported as one replaced block: a correct
	// but not minimal patch.
	diffMaxEdits    = 2000
	noNewlineMarker = `\ No newline at end of file`
)

// diffOp is one line of an edit script: kind ' ', '-' or '+'; a and b are
// the line's index in the old and new text (for '+', a is where it is
// inserted; for '-', b likewise).
type diffOp struct {
	kind byte
	a, b int
}

// structuredPatch returns the hunks that turn oldText into newText, with
// three lines of context. It never returns nil.
func structuredPatch(oldText, newText string) []Hunk {
	a, b := splitKeepNewline(oldText), splitKeepNewline(newText)
	return buildHunks(diffLines(a, b), a, b, patchContext)
}

// splitKeepNewline splits s into lines that keep their "\n"; only the last
// line may lack one. An empty string has no lines.
func splitKeepNewline(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// diffLines returns an edit script from a to b: every line of both appears
// once, in order.
func diffLines(a, b []string) []diffOp {
	ops := make([]diffOp, 0, max(len(a), len(b)))
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		ops = append(ops, diffOp{' ', pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	for _, op := range diffMyers(ma, mb) {
		ops = append(ops, diffOp{op.kind, op.a + pre, op.b + pre})
	}
	for i := range suf {
		ops = append(ops, diffOp{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// diffMyers is the greedy O((N+M)D) algorithm of Myers (1986), keeping one
// snapshot of the frontier per edit distance to walk back the path. It gives
// up past diffMaxEdits and replaces the whole block instead.
func diffMyers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return diffReplaceBlock(n, m)
	}
	// Intern lines so that comparisons are integer compares.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := intern(a), intern(b)
	limit := min(n+m, diffMaxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int // trace[d] = v[-d..d] before step d
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && ia[x] == ib[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return diffBacktrack(trace, n, m)
			}
		}
	}
	return diffReplaceBlock(n, m)
}

func diffBacktrack(trace [][]int, n, m int) []diffOp {
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		prev := trace[d] // index k+d
		at := func(k int) int { return prev[k+d] }
		px, py := 0, 0
		if d > 0 {
			k := x - y
			pk := k - 1
			if k == -d || (k != d && at(k-1) < at(k+1)) {
				pk = k + 1
			}
			px = at(pk)
			py = px - pk
		}
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{' ', x, y})
		}
		if d == 0 {
			break
		}
		if x == px {
			y--
			rev = append(rev, diffOp{'+', x, y})
		} else {
			x--
			rev = append(rev, diffOp{'-', x, y})
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

func diffReplaceBlock(n, m int) []diffOp {
	ops := make([]diffOp, 0, n+m)
	for i := range n {
		ops = append(ops, diffOp{'-', i, 0})
	}
	for j := range m {
		ops = append(ops, diffOp{'+', n, j})
	}
	return ops
}

// hunks groups an edit script into hunks with ctx lines of context; changes
// separated by at most 2*ctx unchanged lines share a hunk.
func buildHunks(ops []diffOp, a, b []string, ctx int) []Hunk {
	out := []Hunk{}
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-ctx)
		last := i
		j := i + 1
		for j < len(ops) {
			if ops[j].kind != ' ' {
				last = j
				j++
				continue
			}
			r := j
			for r < len(ops) && ops[r].kind == ' ' {
				r++
			}
			if r == len(ops) || r-j > 2*ctx {
				break
			}
			j = r
		}
		end := min(len(ops), last+1+ctx)
		out = append(out, makeHunk(ops[start:end], a, b))
		i = end
	}
	return out
}

func makeHunk(ops []diffOp, a, b []string) Hunk {
	h := Hunk{OldStart: ops[0].a + 1, NewStart: ops[0].b + 1, Lines: make([]string, 0, len(ops))}
	for _, op := range ops {
		var line string
		switch op.kind {
		case ' ':
			line = a[op.a]
			h.OldLines++
			h.NewLines++
		case '-':
			line = a[op.a]
			h.OldLines++
		case '+':
			line = b[op.b]
			h.NewLines++
		}
		text, hasNL := strings.CutSuffix(line, "\n")
		h.Lines = append(h.Lines, string(op.kind)+text)
		if !hasNL {
			h.Lines = append(h.Lines, noNewlineMarker)
		}
	}
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	return h
}

// applyHunks applies hunks made by structuredPatch to oldText. It is the
// inverse used by tests and by nothing else; it reports false when a hunk
// does not fit.
func applyHunks(oldText string, hs []Hunk) (string, bool) {
	a := splitKeepNewline(oldText)
	var out strings.Builder
	pos := 0 // next line of a to copy
	for _, h := range hs {
		start := h.OldStart - 1
		if h.OldLines == 0 {
			start = h.OldStart
		}
		if start < pos || start > len(a) {
			return "", false
		}
		for ; pos < start; pos++ {
			out.WriteString(a[pos])
		}
		for i := 0; i < len(h.Lines); i++ {
			l := h.Lines[i]
			if l == noNewlineMarker {
				continue
			}
			nl := "\n"
			if i+1 < len(h.Lines) && h.Lines[i+1] == noNewlineMarker {
				nl = ""
			}
			body := l[1:] + nl
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != body {
					return "", false
				}
				if l[0] == ' ' {
					out.WriteString(body)
				}
				pos++
			case '+':
				out.WriteString(body)
			default:
				return "", false
			}
		}
	}
	for ; pos < len(a); pos++ {
		out.WriteString(a[pos])
	}
	return out.String(), true
}
