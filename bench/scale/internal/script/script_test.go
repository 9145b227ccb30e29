package script

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStep(t *testing.T) {
	root := "/fx"
	tests := []struct {
		done int
		want Call
	}{
		{0, Call{Name: "Read", Input: map[string]any{"file_path": "/fx/pkg0/file00.go"}}},
		{1, Call{Name: "Grep", Input: map[string]any{"pattern": GrepPattern, "path": "/fx"}}},
		{2, Call{Name: "Bash", Input: map[string]any{"command": "echo step 2"}}},
		{3, Call{Name: "Read", Input: map[string]any{"file_path": "/fx/pkg0/file01.go"}}},
		{3 * Dirs * FilesPerDir, Call{Name: "Read", Input: map[string]any{"file_path": "/fx/pkg0/file00.go"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Step(root, tt.done)); diff != "" {
			t.Errorf("Step(%d) (-want +got):\n%s", tt.done, diff)
		}
	}
}

func TestReadStep(t *testing.T) {
	for _, tt := range []struct {
		done int
		want string
	}{{0, "/fx/pkg0/file00.go"}, {1, "/fx/pkg0/file01.go"}, {FilesPerDir, "/fx/pkg1/file00.go"}, {Dirs * FilesPerDir, "/fx/pkg0/file00.go"}} {
		want := Call{Name: "Read", Input: map[string]any{"file_path": tt.want}}
		if diff := cmp.Diff(want, StepFor(WorkloadRead, "/fx", tt.done)); diff != "" {
			t.Errorf("ReadStep(%d) (-want +got):\n%s", tt.done, diff)
		}
	}
	if diff := cmp.Diff(Step("/fx", 1), StepFor(WorkloadMixed, "/fx", 1)); diff != "" {
		t.Errorf("mixed (-Step +StepFor):\n%s", diff)
	}
}

func TestToolResults(t *testing.T) {
	for _, tt := range []struct{ messages, want int }{{0, 0}, {1, 0}, {3, 1}, {11, 5}} {
		if got := ToolResults(tt.messages); got != tt.want {
			t.Errorf("ToolResults(%d) = %d, want %d", tt.messages, got, tt.want)
		}
	}
}

// TestWriteFixture checks that the tree has every file and that the Grep
// pattern matches some files but not all, so Grep has real work to do.
func TestWriteFixture(t *testing.T) {
	root, err := WriteFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(GrepPattern)
	matched := 0
	for _, rel := range Files() {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if re.Match(b) {
			matched++
		}
	}
	if n := len(Files()); matched == 0 || matched == n {
		t.Errorf("pattern matches %d of %d files, want some but not all", matched, n)
	}
}
