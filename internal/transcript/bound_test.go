package transcript_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/transcript"
)

func TestBoundPrompt(t *testing.T) {
	limit := transcript.MaxLastPrompt
	tests := []struct {
		name, in string
		wantCut  bool
	}{
		{"short", "hello", false},
		{"exactly the bound", strings.Repeat("a", limit), false},
		{"one byte over", strings.Repeat("a", limit+1), true},
		{"multi-byte runes across the cut", strings.Repeat("é", limit), true},
		{"4 MB", strings.Repeat("x", 4<<20), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := transcript.BoundPrompt(tc.in)
			if !tc.wantCut {
				if got != tc.in {
					t.Errorf("changed a prompt within the bound")
				}
				return
			}
			if len(got) > limit || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") ||
				!strings.HasPrefix(tc.in, strings.TrimSuffix(got, "…")) {
				t.Errorf("BoundPrompt: %d bytes, valid %v, suffix %q", len(got), utf8.ValidString(got), got[max(0, len(got)-8):])
			}
		})
	}
}
