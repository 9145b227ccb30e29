package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// TestCapped: a result over the server's cap is cut to it with a note,
// one over the warning size is reported, and the cap can be raised or
// turned off.
func TestCapped(t *testing.T) {
	img := model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AQI="}}
	long := strings.Repeat("x", 200_000) // about 50,000 tokens
	mid := strings.Repeat("y", 60_000)   // about 15,000 tokens
	for _, tc := range []struct {
		name      string
		max       int
		in        []model.Content
		wantChars int // characters of text kept before the note; -1: unchanged
		report    string
	}{
		{"default cap", 0, []model.Content{model.TextBlock(long)}, 100_000, "over the limit of 25000"},
		{"small cap, image kept", 10, []model.Content{model.TextBlock("abcdefghij"), img, model.TextBlock(long)}, 40, "over the limit of 10"},
		{"under the warning", 0, []model.Content{model.TextBlock("short")}, -1, ""},
		{"warned, not cut", 0, []model.Content{model.TextBlock(mid)}, -1, "is large: about 15000 tokens"},
		{"no cap", -1, []model.Content{model.TextBlock(long)}, -1, "is large"},
		{"raised cap", 60_000, []model.Content{model.TextBlock(long)}, -1, "is large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reports []string
			cl := &Clients{}
			cl.ReportTo(func(_, text string) { reports = append(reports, text) })
			s := &server{name: "s", cfg: tool.MCPServerConfig{MaxOutputTokens: tc.max}, cl: cl}
			out := s.capped("t", tool.Result{Content: tc.in})
			text, images := 0, 0
			note := false
			for _, c := range out.Content {
				if c.Type == model.TypeImage {
					images++
					continue
				}
				if i := strings.Index(c.Text, "[The tool's output was cut"); i >= 0 {
					note = true
					text += len(strings.TrimRight(c.Text[:i], "\n"))
				} else {
					text += len(c.Text)
				}
			}
			if tc.wantChars >= 0 {
				if !note || text != tc.wantChars {
					t.Errorf("kept %d characters (note %v), want %d and a note", text, note, tc.wantChars)
				}
			} else if note || len(out.Content) != len(tc.in) {
				t.Errorf("result changed: %d blocks, note %v", len(out.Content), note)
			}
			for _, c := range tc.in {
				if c.Type == model.TypeImage {
					images--
				}
			}
			if images != 0 {
				t.Errorf("images kept differ by %d", images)
			}
			got := strings.Join(reports, "\n")
			if (tc.report == "") != (got == "") || !strings.Contains(got, tc.report) {
				t.Errorf("reports %q, want one containing %q", got, tc.report)
			}
		})
	}
}

// FuzzCutResult: cutting keeps valid UTF-8 and never more text than the
// budget (plus the note).
func FuzzCutResult(f *testing.F) {
	f.Add("héllo wörld ✓✓✓", "second", 2)
	f.Add(strings.Repeat("日本", 50), "", 3)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		if limit <= 0 || limit > 1000 || !utf8.ValidString(a) || !utf8.ValidString(b) {
			t.Skip()
		}
		in := tool.Result{Content: []model.Content{model.TextBlock(a), model.TextBlock(b)}}
		out := cutResult(in, limit, estimateTokens(in))
		total := 0
		for _, c := range out.Content {
			if !utf8.ValidString(c.Text) {
				t.Fatalf("invalid UTF-8: %q", c.Text)
			}
			if i := strings.Index(c.Text, "[The tool's output was cut"); i >= 0 {
				total += len(c.Text[:i])
			} else {
				total += len(c.Text)
			}
		}
		if total > limit*charsPerToken+2 {
			t.Fatalf("kept %d bytes for a limit of %d tokens", total, limit)
		}
	})
}
