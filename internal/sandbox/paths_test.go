package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExpandGlobs: deny patterns become the existing paths they match,
// within the walk budget.
func TestExpandGlobs(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".env", "a/.env", "a/b/.env", "secrets/k1", "secrets/k2", "x[1]/f", "keep.txt"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, strings.TrimPrefix(p, root))
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name     string
		patterns []string
		want     []string
	}{
		{"literal", []string{root + "/secrets"}, []string{"/secrets"}},
		{"missing literal", []string{root + "/nothing"}, nil},
		{"escaped literal", []string{root + `/x\[1\]`}, []string{"/x[1]"}},
		{"any depth", []string{root + "/**/.env"}, []string{"/.env", "/a/.env", "/a/b/.env"}},
		{"anywhere from the roots", []string{"/**/.env"}, []string{"/.env", "/a/.env", "/a/b/.env"}},
		{"directory match not walked", []string{root + "/*"}, []string{"/.env", "/a", "/keep.txt", "/secrets", "/x[1]"}},
		{"relative ignored", []string{"secrets"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trunc := ExpandGlobs(tt.patterns, []string{root}, 1000)
			if trunc {
				t.Error("truncated")
			}
			if diff := cmp.Diff(tt.want, rel(got)); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
	if _, trunc := ExpandGlobs([]string{root + "/**/.env"}, nil, 3); !trunc {
		t.Error("a walk over its budget did not report truncation")
	}
}
