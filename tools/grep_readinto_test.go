package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGrepReadIntoSizes checks that a file is read whole whatever fstat
// said of its size: right, unknown, or out of date because the file grew
// or shrank since.
func TestGrepReadIntoSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 100, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10} {
		data := bytes.Repeat([]byte("abcdefghij\n"), n/11+1)[:n]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{int64(n), -1, int64(n) / 2, int64(n) + 10} {
			f, err := openGrepFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := grepReadInto(f, nil, size)
			f.close()
			if err != nil {
				t.Fatalf("%d bytes, size %d: %v", n, size, err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%d bytes, size %d: read %d bytes, want the whole file", n, size, len(got))
			}
		}
	}
}
