package permission

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConditionMatch(t *testing.T) {
	cwd := t.TempDir()
	bash := func(cmd string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return b
	}
	file := func(key, p string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{key: p})
		return b
	}
	type tc struct {
		name, cond, tool string
		input            json.RawMessage
		cwd              string
		want             ConditionResult
	}
	tests := []tc{
		// Tool names.
		{"bare tool matches every call", "Bash", "Bash", bash("ls"), cwd, ConditionMatch},
		{"other tool", "Bash", "Read", file("file_path", "a"), cwd, ConditionNoMatch},
		{"empty parens is the whole tool", "Bash()", "Bash", bash("ls"), cwd, ConditionMatch},
		{"star is the whole tool", "Bash(*)", "Bash", bash("ls"), cwd, ConditionMatch},
		{"legacy name", "Task", "Agent", json.RawMessage(`{}`), cwd, ConditionMatch},
		{"mcp full name", "mcp__gh__create_issue", "mcp__gh__create_issue", json.RawMessage(`{}`), cwd, ConditionMatch},
		{"mcp other tool", "mcp__gh__create_issue", "mcp__gh__list", json.RawMessage(`{}`), cwd, ConditionNoMatch},
		{"mcp server covers its tools", "mcp__gh", "mcp__gh__list", json.RawMessage(`{}`), cwd, ConditionMatch},
		{"mcp server prefix is not another server", "mcp__gh", "mcp__ghx__list", json.RawMessage(`{}`), cwd, ConditionNoMatch},
		{"mcp glob", "mcp__gh__*", "mcp__gh__list", json.RawMessage(`{}`), cwd, ConditionMatch},
		{"Read rule does not cover Grep", "Read", "Grep", file("path", "."), cwd, ConditionNoMatch},

		// Bash patterns.
		{"bash prefix", "Bash(rm *)", "Bash", bash("rm -rf x"), cwd, ConditionMatch},
		{"bash no match", "Bash(rm *)", "Bash", bash("ls"), cwd, ConditionNoMatch},
		{"bash word boundary", "Bash(rm *)", "Bash", bash("rmdir x"), cwd, ConditionNoMatch},
		{"bash and-list, second part", "Bash(rm *)", "Bash", bash("ls && rm -rf x"), cwd, ConditionMatch},
		{"bash pipe", "Bash(rm *)", "Bash", bash("ls | xargs rm"), cwd, ConditionMatch},
		{"bash semicolon", "Bash(rm *)", "Bash", bash("ls; rm x"), cwd, ConditionMatch},
		{"bash subshell", "Bash(rm *)", "Bash", bash("(cd /tmp && rm x)"), cwd, ConditionMatch},
		{"bash command substitution", "Bash(rm *)", "Bash", bash("echo $(rm -rf x)"), cwd, ConditionMatch},
		{"bash wrapper", "Bash(rm *)", "Bash", bash("sudo rm x"), cwd, ConditionMatch},
		{"bash unknown command word", "Bash(rm *)", "Bash", bash("$CMD -rf x"), cwd, ConditionUnknown},
		{"bash eval", "Bash(rm *)", "Bash", bash(`eval "$X"`), cwd, ConditionUnknown},
		{"bash parse failure", "Bash(rm *)", "Bash", bash("echo 'unterminated"), cwd, ConditionUnknown},
		{"bash hidden substitution", "Bash(rm *)", "Bash", bash(`bash -c "$(cat f)"`), cwd, ConditionUnknown},
		{"bash git", "Bash(git *)", "Bash", bash("git status"), cwd, ConditionMatch},
		{"bash legacy prefix", "Bash(npm run test:*)", "Bash", bash("npm run test -- -v"), cwd, ConditionMatch},
		{"bash legacy prefix no match", "Bash(npm run test:*)", "Bash", bash("npm run build"), cwd, ConditionNoMatch},
		{"bash without cwd", "Bash(rm *)", "Bash", bash("rm x"), "", ConditionMatch},

		// File paths.
		{"edit under src", "Edit(src/**)", "Edit", file("file_path", "src/a.go"), cwd, ConditionMatch},
		{"edit absolute under src", "Edit(src/**)", "Edit", file("file_path", cwd+"/src/a.go"), cwd, ConditionMatch},
		{"edit elsewhere", "Edit(src/**)", "Edit", file("file_path", "docs/a.md"), cwd, ConditionNoMatch},
		{"edit rule, write call", "Edit(src/**)", "Write", file("file_path", "src/a.go"), cwd, ConditionNoMatch},
		{"write rule", "Write(*.md)", "Write", file("file_path", "docs/a.md"), cwd, ConditionMatch},
		{"read ./ pattern", "Read(./secrets/**)", "Read", file("file_path", "secrets/k"), cwd, ConditionMatch},
		{"read ./ pattern elsewhere", "Read(./secrets/**)", "Read", file("file_path", "other/k"), cwd, ConditionNoMatch},
		{"notebook", "NotebookEdit(*.ipynb)", "NotebookEdit", file("notebook_path", "n.ipynb"), cwd, ConditionMatch},
		{"glob path", "Glob(/vendor/**)", "Glob", file("path", "vendor/x"), cwd, ConditionMatch},
		{"grep default path is cwd", "Grep(/vendor/**)", "Grep", json.RawMessage(`{"pattern":"x"}`), cwd, ConditionNoMatch},
		{"relative path, no cwd", "Edit(src/**)", "Edit", file("file_path", "src/a.go"), "", ConditionUntested},
		{"absolute path, no cwd", "Edit(src/**)", "Edit", file("file_path", "/p/src/a.go"), "", ConditionMatch},
		{"./ pattern, no cwd", "Read(./x/**)", "Read", file("file_path", "/p/x/y"), "", ConditionUntested},
		{"no path in input", "Edit(src/**)", "Edit", json.RawMessage(`{}`), cwd, ConditionUntested},

		// Other matchers.
		{"webfetch domain", "WebFetch(domain:example.com)", "WebFetch", file("url", "https://example.com/x"), cwd, ConditionMatch},
		{"webfetch other domain", "WebFetch(domain:example.com)", "WebFetch", file("url", "https://example.org/x"), cwd, ConditionNoMatch},
		{"webfetch bad url", "WebFetch(domain:example.com)", "WebFetch", file("url", "::"), cwd, ConditionUnknown},
		{"agent type", "Agent(Explore)", "Agent", file("subagent_type", "Explore"), cwd, ConditionMatch},
		{"agent other type", "Agent(Explore)", "Agent", file("subagent_type", "Plan"), cwd, ConditionNoMatch},
		{"parameter rule", "mcp__s__t(mode:fast)", "mcp__s__t", json.RawMessage(`{"mode":"fast"}`), cwd, ConditionMatch},
		{"parameter rule no match", "mcp__s__t(mode:fast)", "mcp__s__t", json.RawMessage(`{"mode":"slow"}`), cwd, ConditionNoMatch},
		{"content without a matcher", "WebSearch(cats)", "WebSearch", json.RawMessage(`{"query":"cats"}`), cwd, ConditionUnknown},
		{"content without a matcher, other tool", "WebSearch(cats)", "Bash", bash("ls"), cwd, ConditionNoMatch},
		{"powershell content", "PowerShell(Remove-Item *)", "PowerShell", bash("Remove-Item x"), cwd, ConditionUnknown},
	}
	type out struct {
		Result ConditionResult
		Reason bool // a reason is given
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCondition(tt.cond)
			if err != nil {
				t.Fatalf("ParseCondition(%q): %v", tt.cond, err)
			}
			got, why := c.Match(ConditionCall{Tool: tt.tool, Input: tt.input, Cwd: tt.cwd, Home: cwd})
			want := out{tt.want, tt.want == ConditionUnknown || tt.want == ConditionUntested}
			if diff := cmp.Diff(want, out{got, why != ""}); diff != "" {
				t.Errorf("%s on %s %s (-want +got):\n%s\nreason: %s", tt.cond, tt.tool, tt.input, diff, why)
			}
		})
	}
}

func TestParseConditionErrors(t *testing.T) {
	for _, s := range []string{"", "Bash(rm *", "Ba sh(x)", "Bash(a))"} {
		_, err := ParseCondition(s)
		var re *RuleError
		if !errors.As(err, &re) {
			t.Errorf("ParseCondition(%q) = %v, want a *RuleError", s, err)
		}
	}
	c, err := ParseCondition("WebSearch(cats)")
	if err != nil || c.Note() == "" {
		t.Errorf("ParseCondition(WebSearch(cats)) = note %q, err %v; want a note", c.Note(), err)
	}
	c, err = ParseCondition(" Bash(git *) ")
	if diff := cmp.Diff("Bash(git *)", c.String()); err != nil || diff != "" {
		t.Errorf("String (-want +got):\n%s (err %v)", diff, err)
	}
}
