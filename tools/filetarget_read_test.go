//go:build unix

package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestTargetReadSizes checks that the file tools read a file whole
// whatever the stat before said of its size: right, unknown, or out of
// date because the file grew or shrank since.
func TestTargetReadSizes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, n := range []int{0, 1, 100, 4479, 64 << 10, 200 << 10} {
		data := bytes.Repeat([]byte("abcdefghij\n"), n/11+1)[:n]
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{int64(n), -1, int64(n) / 2, int64(n) - 1, int64(n) + 1, int64(n) + 10} {
			d, err := openTargetDir(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.read(size)
			d.close()
			if err != nil {
				t.Fatalf("%d bytes, size %d: %v", n, size, err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%d bytes, size %d: read %d bytes, want the whole file", n, size, len(got))
			}
		}
	}
}
