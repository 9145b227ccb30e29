package agentloop_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxGoFileBytes is the largest Go file the module keeps: a file over it
// is doing more than one thing and gets split by what it does.
const maxGoFileBytes = 25 << 10

// TestLayoutFileSize holds every Go file of the module (tests included)
// to maxGoFileBytes.
func TestLayoutFileSize(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > maxGoFileBytes {
			t.Errorf("%s is %d bytes, over %d: split it by what it does", path, info.Size(), maxGoFileBytes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
