package tools

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEditStructuredPatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     []Hunk
	}{
		{"recorded", "color = red\nsize = 3\n", "color = blue\nsize = 3\n",
			[]Hunk{{1, 2, 1, 2, []string{"-color = red", "+color = blue", " size = 3"}}}},
		{"same", "a\nb\n", "a\nb\n", []Hunk{}},
		{"from_empty", "", "x\ny\n", []Hunk{{0, 0, 1, 2, []string{"+x", "+y"}}}},
		{"to_empty", "x\n", "", []Hunk{{1, 1, 0, 0, []string{"-x"}}}},
		{"insert_middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\n5\nnew\n6\n7\n8\n9\n10\n",
			[]Hunk{{3, 6, 3, 7, []string{" 3", " 4", " 5", "+new", " 6", " 7", " 8"}}}},
		{"two_hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			[]Hunk{
				{1, 4, 1, 4, []string{"-1", "+one", " 2", " 3", " 4"}},
				{9, 4, 9, 4, []string{" 9", " 10", " 11", "-12", "+twelve"}},
			}},
		{"merged_hunks", "1\n2\n3\n4\n5\n6\n7\n8\n", "one\n2\n3\n4\n5\n6\n7\neight\n",
			[]Hunk{{1, 8, 1, 8, []string{"-1", "+one", " 2", " 3", " 4", " 5", " 6", " 7", "-8", "+eight"}}}},
		{"newline_added_at_end", "a\nb", "a\nb\n",
			[]Hunk{{1, 2, 1, 2, []string{" a", "-b", `\ No newline at end of file`, "+b"}}}},
		{"delete_first", "a\nb\nc\n", "b\nc\n", []Hunk{{1, 3, 1, 2, []string{"-a", " b", " c"}}}},
	} {
		got := structuredPatch(tc.old, tc.new)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if back, ok := applyHunks(tc.old, got); !ok || back != tc.new {
			t.Errorf("%s: applying the patch gave %q, %v", tc.name, back, ok)
		}
	}
}

// TestEditStructuredPatchRoundTrip checks on random texts that the patch turns
// the old text into the new one, and that a minimal diff changes no more
// lines than needed.
func TestEditStructuredPatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d", ""}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte('\n')
		}
		s := b.String()
		if rng.IntN(3) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	for range 2000 {
		a, b := gen(rng.IntN(30)), gen(rng.IntN(30))
		hs := structuredPatch(a, b)
		got, ok := applyHunks(a, hs)
		if !ok || got != b {
			t.Fatalf("patch of %q -> %q does not apply: %v %q\n%+v", a, b, ok, got, hs)
		}
		// The number of changed lines equals the edit distance, which
		// is len(a)+len(b)-2*LCS.
		la, lb := splitKeepNewline(a), splitKeepNewline(b)
		changed := 0
		for _, op := range diffLines(la, lb) {
			if op.kind != ' ' {
				changed++
			}
		}
		if want := len(la) + len(lb) - 2*ftLCS(la, lb); changed != want {
			t.Fatalf("diff of %q -> %q changes %d lines, minimal is %d", a, b, changed, want)
		}
	}
}

func ftLCS(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestWriteStructuredPatchLarge checks that a diff beyond the edit budget still
// gives a correct patch, quickly.
func TestWriteStructuredPatchLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 20000 {
		a.WriteString("old line " + strings.Repeat("x", i%7) + "\n")
		b.WriteString("new line " + strings.Repeat("y", i%5) + "\n")
	}
	hs := structuredPatch(a.String(), b.String())
	if got, ok := applyHunks(a.String(), hs); !ok || got != b.String() {
		t.Fatal("large patch does not apply")
	}
}
