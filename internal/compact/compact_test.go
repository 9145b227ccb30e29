package compact

import (
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func user(text string) model.Message {
	return model.Message{Role: "user", Content: []model.Content{model.TextBlock(text)}}
}

func assistant(text string) model.Message {
	return model.Message{Role: "assistant", Content: []model.Content{model.TextBlock(text)}}
}

func call(id string) model.Message {
	return model.Message{Role: "assistant", Content: []model.Content{{Type: model.TypeToolUse, ID: id, Name: "t", Input: []byte(`{}`)}}}
}

func result(id, text string) model.Message {
	return model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: id, Text: text}}}
}

// orphans returns the tool_result ids of msgs whose tool_use is not in
// msgs, and the tool_use ids without a result.
func orphans(msgs []model.Message) []string {
	uses, results := map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.Content {
			switch c.Type {
			case model.TypeToolUse:
				uses[c.ID] = true
			case model.TypeToolResult:
				results[c.ToolUseID] = true
			}
		}
	}
	var out []string
	for id := range results {
		if !uses[id] {
			out = append(out, "result "+id)
		}
	}
	for id := range uses {
		if !results[id] {
			out = append(out, "use "+id)
		}
	}
	return out
}

func TestSplitLastNeverSeparatesToolPairs(t *testing.T) {
	big := strings.Repeat("x", 4000)
	history := []model.Message{user("start")}
	for i := range 20 {
		id := "toolu_" + string(rune('a'+i))
		history = append(history, call(id), result(id, big))
	}
	history = append(history, assistant("done"), user("next"))
	// Every few tokens, so that some budgets end just after a
	// tool_result, where a careless cut would land.
	for keep := int64(0); keep < 12_000; keep += 7 {
		older, kept := SplitLast(history, keep)
		if len(older) == 0 {
			t.Fatalf("keep %d: nothing summarised", keep)
		}
		if len(older)+len(kept) != len(history) {
			t.Fatalf("keep %d: %d+%d messages of %d", keep, len(older), len(kept), len(history))
		}
		if o := orphans(kept); len(o) > 0 {
			t.Errorf("keep %d: kept part has orphans %v", keep, o)
		}
		if o := orphans(older); len(o) > 0 {
			t.Errorf("keep %d: summarised part has orphans %v", keep, o)
		}
		if Estimate(kept) > keep && len(kept) > 0 {
			t.Errorf("keep %d: kept %d tokens", keep, Estimate(kept))
		}
		got := Compacted([]model.Content{model.TextBlock("summary")}, kept)
		for i := 1; i < len(got); i++ {
			if got[i].Role == got[i-1].Role {
				t.Errorf("keep %d: messages %d and %d are both %s", keep, i-1, i, got[i].Role)
			}
		}
		if got[0].Role != "user" || got[0].Content[0].Text != "summary" {
			t.Errorf("keep %d: compacted history starts with %+v", keep, got[0])
		}
	}
	// A generous budget keeps the latest round (the reply and the prompt
	// after it), and no more.
	if _, kept := SplitLast(history, 5000); len(kept) != 2 || kept[0].Role != "assistant" {
		t.Errorf("kept %d messages, want the last round (2)", len(kept))
	}
}

func TestFit(t *testing.T) {
	big := strings.Repeat("y", 8000)
	history := []model.Message{user("start")}
	for i := range 10 {
		id := "toolu_" + string(rune('a'+i))
		history = append(history, call(id), result(id, big))
	}
	if got := Fit(history[:1], 100); len(got) != 1 {
		t.Errorf("a history that fits was cut: %d messages", len(got))
	}
	got := Fit(history, 7000)
	if Estimate(got) > 7000 {
		t.Errorf("fitted history is %d tokens", Estimate(got))
	}
	if o := orphans(got); len(o) > 0 {
		t.Errorf("fitted history has orphans %v", o)
	}
	if len(got) == 0 || len(got) == len(history) {
		t.Errorf("fitted history has %d of %d messages", len(got), len(history))
	}
}

func TestDue(t *testing.T) {
	added := []model.Message{user(strings.Repeat("z", 4000))} // about 1000 tokens
	cases := []struct {
		base, threshold int64
		want            bool
	}{
		{0, 0, false},
		{500, 2000, false},
		{1500, 2000, true},
		{962_000, 967_000, false}, // the reference's 962k of 1M: no compaction
		{990_000, 967_000, true},  // and 990k: compaction
	}
	for _, c := range cases {
		a := added
		if c.base > 100_000 {
			a = nil
		}
		if got := Due(c.base, a, c.threshold); got != c.want {
			t.Errorf("Due(%d, …, %d) = %v, want %v", c.base, c.threshold, got, c.want)
		}
	}
}

func TestCommand(t *testing.T) {
	cases := []struct {
		in, name, args string
		ok             bool
	}{
		{"/compact", "compact", "", true},
		{"  /compact keep the test names\n", "compact", "keep the test names", true},
		{"/compact\nfocus on\nthe API", "compact", "focus on\nthe API", true},
		{"/clear", "clear", "", true},
		{"/compactly", "", "", false},
		{"/clearer", "", "", false},
		{"/reset", "clear", "", true},
		{" /new ", "clear", "", true},
		{"/newline", "", "", false},
		{"/resets", "", "", false},
		{"please /compact", "", "", false},
		{"compact", "", "", false},
	}
	for _, c := range cases {
		name, args, ok := Command(c.in)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("Command(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, args, ok, c.name, c.args, c.ok)
		}
	}
}

// FuzzCommand: whatever the prompt, a recognised command is one of the
// two built-in names, and the prompt starts with a slash and a known name.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"/compact x", "/clear", "/new", "/reset y", "/newline", "", "/", "//clear"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prompt string) {
		name, args, ok := Command(prompt)
		if !ok {
			if name != "" || args != "" {
				t.Errorf("Command(%q) = %q, %q without ok", prompt, name, args)
			}
			return
		}
		if name != "compact" && name != "clear" {
			t.Errorf("Command(%q) name %q", prompt, name)
		}
		p := strings.TrimSpace(prompt)
		if !strings.HasPrefix(p, "/compact") && !strings.HasPrefix(p, "/clear") && !strings.HasPrefix(p, "/reset") && !strings.HasPrefix(p, "/new") {
			t.Errorf("Command(%q) recognised a prompt that names no command", prompt)
		}
		if args != strings.TrimSpace(args) {
			t.Errorf("Command(%q) args %q not trimmed", prompt, args)
		}
	})
}

func TestMemoryInstructions(t *testing.T) {
	md := "# Project\nUse tabs.\n\n## Summary instructions\nKeep every file name.\n### Detail\nAnd test names.\n## Style\nShort lines.\n```\n# compact inside a fence\n```\n# Compact instructions\nMention RULE-7.\n"
	want := "## Summary instructions\nKeep every file name.\n### Detail\nAnd test names.\n# Compact instructions\nMention RULE-7."
	if diff := cmp.Diff(want, MemoryInstructions(md)); diff != "" {
		t.Errorf("instructions (-want +got):\n%s", diff)
	}
	// As the CLAUDE.md block renders files: a section ends with its file,
	// and the frame lines around the files are not part of it.
	block := "<system-reminder>\nIntro.\n\nContents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\n## Summary instructions\nKeep RULE-7.\n\n" +
		"Contents of /p/CLAUDE.local.md (user's private project instructions, not checked in):\n\nUnrelated local note.\n</system-reminder>"
	if diff := cmp.Diff("## Summary instructions\nKeep RULE-7.", MemoryInstructions(block)); diff != "" {
		t.Errorf("instructions from a rendered block (-want +got):\n%s", diff)
	}
	if got := MemoryInstructions("# Rules\nNo summaries here? no heading.\n"); got != "" {
		t.Errorf("instructions from a file without such a section: %q", got)
	}
}

func TestBuild(t *testing.T) {
	history := []model.Message{call("toolu_x"), result("toolu_x", "out")}
	history[1].Content[0].CacheControl = &model.CacheControl{Type: "ephemeral"}
	req := Request{Model: "m", History: history, MaxTokens: 100, Instructions: "Keep RULE-7.", Custom: "focus on tests"}.Build()
	if len(req.Tools) != 0 || req.Thinking != nil {
		t.Errorf("summary request has tools or thinking: %+v", req)
	}
	if req.Messages[0].Role != "user" {
		t.Errorf("first message is %s", req.Messages[0].Role)
	}
	last := req.Messages[len(req.Messages)-1]
	text := last.Content[len(last.Content)-1].Text
	for _, want := range []string{"Keep RULE-7.", "focus on tests", "summary"} {
		if !strings.Contains(text, want) {
			t.Errorf("instruction lacks %q", want)
		}
	}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.CacheControl != nil {
				t.Error("cache_control left in the summary request")
			}
		}
	}
	if history[1].Content[0].CacheControl == nil || len(history[1].Content) != 1 {
		t.Error("Build modified the history")
	}
}

// TestBuildReferencesAsText: the summary request declares no tools, so a
// ToolSearch result of tool_reference blocks goes as text naming the
// tools, and the history itself is left alone.
func TestBuildReferencesAsText(t *testing.T) {
	ref := model.Content{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{model.ToolReference("mcp__s__a")}}
	history := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("go")}},
		{Role: "assistant", Content: []model.Content{{Type: model.TypeToolUse, ID: "t1", Name: "ToolSearch", Input: []byte(`{}`)}}},
		{Role: "user", Content: []model.Content{ref}},
	}
	req := Request{Model: "m", History: history, MaxTokens: 10}.Build()
	got := req.Messages[2].Content[0]
	want := model.Content{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{model.TextBlock("Loaded tool: mcp__s__a")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary request's result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ref, history[2].Content[0]); diff != "" {
		t.Errorf("history changed (-want +got):\n%s", diff)
	}
}
