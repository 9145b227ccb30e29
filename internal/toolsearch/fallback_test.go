package toolsearch

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestModelSupported(t *testing.T) {
	for _, c := range []struct {
		model string
		want  bool
	}{
		{"claude-sonnet-4-5", true},
		{"claude-sonnet-4-5-20250929", true},
		{"claude-haiku-4-5", true},
		{"claude-opus-4-6", true},
		{"claude-opus-5-5", true},
		{"claude-fable-5-2", true},
		{"anthropic.claude-haiku-4-5-20251001-v1:0", true},
		{"claude-3-5-haiku", false},
		{"claude-3-7-sonnet-20250219", false},
		{"claude-3-opus-20240229", false},
		{"claude-sonnet-4-20250514", false},
		{"claude-opus-4-0", false},
		{"claude-opus-4-1", false},
		{"claude-opus-4-1-20250805", false},
		{"claude-2.1", false},
		{"CLAUDE-3-5-HAIKU", false},
		{"opus", true}, // an alias: unknown here, kept on
		{"my-local-model", true},
		{"claude-instant", true}, // no generation to read
		{"", true},
	} {
		if got := ModelSupported(c.model); got != c.want {
			t.Errorf("ModelSupported(%q) = %v, want %v", c.model, got, c.want)
		}
	}
}

func FuzzModelSupported(f *testing.F) {
	for _, s := range []string{"claude-3-5-haiku", "claude-opus-4-1", "claude-sonnet-4-20250514", "claude-", "claude--4-", "x.claude-9.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		major, minor, ok := generation(s)
		if a, b, c := generationRef(s); a != major || b != minor || c != ok {
			t.Errorf("generation(%q) = %d, %d, %v; the list-based reading says %d, %d, %v", s, major, minor, ok, a, b, c)
		}
		if !ok {
			if !ModelSupported(s) {
				t.Errorf("%q: no generation read, yet unsupported", s)
			}
			return
		}
		if major < 0 || major > 99 || minor < 0 || minor > 99 {
			t.Errorf("%q: generation %d.%d out of range", s, major, minor)
		}
		if !strings.Contains(strings.ToLower(s), "claude-") {
			t.Errorf("%q: generation read without claude-", s)
		}
	})
}

func TestFirstParty(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"", true},
		{"https://api.anthropic.com", true},
		{"https://api.anthropic.com/v1", true},
		{"https://API.Anthropic.com", true},
		{"http://127.0.0.1:43123", true},
		{"http://127.8.0.1", true},
		{"http://[::1]:8080", true},
		{"http://localhost:9000/proxy", true},
		{"https://llm-gateway.example.com", false},
		{"https://anthropic.com.evil.example", false},
		{"https://notanthropic.com", false},
		{"http://10.0.0.5:8080", false},
		{"not a url", false},
	} {
		if got := FirstParty(c.url); got != c.want {
			t.Errorf("FirstParty(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

// TestPlanModes: each mode against deferrable definitions of a known
// size, at and around the auto threshold.
func TestPlanModes(t *testing.T) {
	// Four deferrable tools of exactly 1000 bytes each (name, hint,
	// description and schema): 4000 bytes, 1000 tokens by the estimate.
	mk := func(name string, hint bool) tool.Info {
		in := tool.Info{Name: name, MCP: true, InputSchema: []byte(`{"type":"object"}`)}
		if hint {
			in.SearchHint = strings.Repeat("h", 100)
		}
		in.Description = strings.Repeat("d", 1000-len(in.Name)-len(in.InputSchema)-len(in.SearchHint))
		return in
	}
	deferrable := []tool.Info{mk("mcp__s__a", false), mk("mcp__s__b", true), mk("mcp__s__c", false), mk("mcp__s__d", true)}
	all := append([]tool.Info{{Name: "Read", Description: strings.Repeat("r", 50_000)}}, deferrable...)
	every := []string{"mcp__s__a", "mcp__s__b", "mcp__s__c", "mcp__s__d"}
	for _, c := range []struct {
		setting string
		window  int64
		want    []string
	}{
		{"", 1_000_000, every},     // unset: on at any size
		{"true", 1_000_000, every}, // on at any size
		{"false", 1000, nil},
		{"auto", 10_000, every},      // 1000 tokens = 10%: reached
		{"auto", 10_001, nil},        // just under 10%
		{"auto", 0, every},           // unknown window: counts as reached
		{"auto:50", 2000, every},     // 50% exactly
		{"auto:50", 2001, nil},       // just under
		{"auto:100", 1000, every},    // the whole window
		{"auto:1", 100_000, every},   // 1%
		{"auto:1", 100_001, nil},     // just under
		{"auto:0", 1_000_000, every}, // no threshold: on
	} {
		m, err := ParseMode(c.setting)
		if err != nil {
			t.Fatalf("ParseMode(%q): %v", c.setting, err)
		}
		if diff := cmp.Diff(c.want, names(Plan(m, all, c.window))); diff != "" {
			t.Errorf("%q, window %d (-want +got):\n%s", c.setting, c.window, diff)
		}
	}
}

func TestSearchHint(t *testing.T) {
	c := NewCatalog([]tool.Info{
		{Name: "mcp__cal__viewer", Description: "Shows a calendar."},
		{Name: "mcp__cal__op_a", Description: "Does operation A.", SearchHint: "Book a calendar slot; schedule meetings"},
		{Name: "mcp__cal__op_b", Description: "Does operation B."},
	})
	for _, q := range []struct {
		query string
		want  []string
	}{
		{"calendar", []string{"mcp__cal__op_a", "mcp__cal__viewer"}}, // hint word 4 > description word 2
		{"meetings", []string{"mcp__cal__op_a"}},
		{"meet", []string{"mcp__cal__op_a"}}, // inside the hint
		{"+schedule calendar", []string{"mcp__cal__op_a"}},
		{"op_b", []string{"mcp__cal__op_b"}},
	} {
		if diff := cmp.Diff(q.want, names(c.Search(q.query, 0))); diff != "" {
			t.Errorf("Search(%q) (-want +got):\n%s", q.query, diff)
		}
	}
}

func TestListLine(t *testing.T) {
	long := strings.Repeat("é", MaxHintChars+10)
	for _, c := range []struct {
		in   tool.Info
		want string
	}{
		{tool.Info{Name: "WebFetch"}, "WebFetch"},
		{tool.Info{Name: "x", SearchHint: "  \n "}, "x"},
		{tool.Info{Name: "mcp__a__b", SearchHint: " book\n\ta   slot "}, "mcp__a__b: book a slot"},
		{tool.Info{Name: "y", SearchHint: long}, "y: " + strings.Repeat("é", MaxHintChars-1) + "…"},
	} {
		if got := ListLine(c.in); got != c.want {
			t.Errorf("ListLine(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
	a := Announcement(NewCatalog([]tool.Info{{Name: "WebFetch"}, {Name: "mcp__a__b", SearchHint: "book a slot"}}))
	if !strings.Contains(a, "<deferred-tools>\nWebFetch\nmcp__a__b: book a slot\n</deferred-tools>") {
		t.Errorf("announcement lists:\n%s", a)
	}
}

// TestGenerationTable pins generation's readings, and that reading one
// allocates nothing (it runs before every request).
func TestGenerationTable(t *testing.T) {
	for _, c := range []struct {
		model        string
		major, minor int
		ok           bool
	}{
		{"claude-3-5-haiku", 3, 5, true},
		{"claude-sonnet-4-20250514", 4, 0, true},
		{"claude-opus-4-1", 4, 1, true},
		{"claude-2.1", 2, 1, true},
		{"anthropic.claude-haiku-4-5-v1:0", 4, 5, true},
		{"claude-opus-5-5-20260101", 5, 5, true},
		{"claude-sonnet", 0, 0, false},
		{"claude-", 0, 0, false},
		{"gpt-4", 0, 0, false},
		{"CLAUDE-SONNET-4-5", 4, 5, true},
	} {
		major, minor, ok := generation(c.model)
		if major != c.major || minor != c.minor || ok != c.ok {
			t.Errorf("generation(%q) = %d, %d, %v; want %d, %d, %v", c.model, major, minor, ok, c.major, c.minor, c.ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { generation("claude-sonnet-4-5-20250929") }); n != 0 {
		t.Errorf("generation allocates %v times per call, want 0", n)
	}
}

// generationRef is generation as it was written first, with the list of
// parts made by strings.FieldsFunc: the fuzz target holds the allocation-
// free reading to it.
func generationRef(model string) (major, minor int, ok bool) {
	m := strings.ToLower(model)
	i := strings.Index(m, "claude-")
	if i < 0 {
		return 0, 0, false
	}
	parts := strings.FieldsFunc(m[i+len("claude-"):], func(r rune) bool { return r == '-' || r == '.' })
	for j, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || len(p) > 2 {
			continue
		}
		major = n
		if j+1 < len(parts) && len(parts[j+1]) <= 2 {
			if n2, err := strconv.Atoi(parts[j+1]); err == nil {
				minor = n2
			}
		}
		return major, minor, true
	}
	return 0, 0, false
}
