package checkpoint

import "bytes"

// maxDiffCells bounds the work of lineDiff's longest common subsequence
// (lines of the old middle × lines of the new middle); past it the middles
// count as wholly deleted and inserted.
const maxDiffCells = 4_000_000

// lineDiff counts the lines a change from old to new inserts and deletes:
// the lines outside a longest common subsequence of the two. A last line
// without a newline counts as a line.
func lineDiff(old, new []byte) (ins, del int) {
	a, b := splitLines(old), splitLines(new)
	for len(a) > 0 && len(b) > 0 && bytes.Equal(a[0], b[0]) {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && bytes.Equal(a[len(a)-1], b[len(b)-1]) {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) == 0 || len(b) == 0 || len(a)*len(b) > maxDiffCells {
		return len(b), len(a)
	}
	prev := make([]int, len(b)+1)
	row := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case bytes.Equal(a[i], b[j]):
				row[j+1] = prev[j] + 1
			case row[j] >= prev[j+1]:
				row[j+1] = row[j]
			default:
				row[j+1] = prev[j+1]
			}
		}
		prev, row = row, prev
	}
	common := prev[len(b)]
	return len(b) - common, len(a) - common
}

// splitLines splits data after each newline; a last line without one is
// kept.
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}
