package permission

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in   string
		want RuleValue
	}{
		{"Bash", RuleValue{ToolName: "Bash"}},
		{"  Bash  ", RuleValue{ToolName: "Bash"}},
		{"Bash()", RuleValue{ToolName: "Bash"}},
		{"Bash(*)", RuleValue{ToolName: "Bash", RuleContent: "*"}},
		{"Bash(npm run build)", RuleValue{ToolName: "Bash", RuleContent: "npm run build"}},
		{"Bash(git status:*)", RuleValue{ToolName: "Bash", RuleContent: "git status:*"}},
		{"Bash(echo (x))", RuleValue{ToolName: "Bash", RuleContent: "echo (x)"}},
		{`Bash(echo \(x)`, RuleValue{ToolName: "Bash", RuleContent: "echo (x"}},
		{`Bash(echo \\)`, RuleValue{ToolName: "Bash", RuleContent: `echo \`}},
		{`Bash(git\ status)`, RuleValue{ToolName: "Bash", RuleContent: `git\ status`}},
		{"Read(//etc/**)", RuleValue{ToolName: "Read", RuleContent: "//etc/**"}},
		{"WebFetch(domain:example.com)", RuleValue{ToolName: "WebFetch", RuleContent: "domain:example.com"}},
		{"mcp__my.server__tool", RuleValue{ToolName: "mcp__my_server__tool"}},
		{"mcp__github__get_*", RuleValue{ToolName: "mcp__github__get_*"}},
		{"Task", RuleValue{ToolName: "Agent"}},
		{"Task(Explore)", RuleValue{ToolName: "Agent", RuleContent: "Explore"}},
		{"KillShell", RuleValue{ToolName: "TaskStop"}},
		{"Skill(deploy *)", RuleValue{ToolName: "Skill", RuleContent: "deploy *"}},
	}
	for _, tt := range tests {
		got, err := ParseRule(tt.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseRule(%q) (-want +got):\n%s", tt.in, diff)
		}
		again, err := ParseRule(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q through %q gave %v, %v", tt.in, got.String(), again, err)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, in := range []string{"", "   ", "(x)", "Bash(", "Bash(x", "Bash(x) y", "Bash)x", "Ba sh", "Bash(x))", "Bash((x)",
		"Bash(a\x00b)", "Bash(a\nb)", "Bäsh", "\xff"} {
		_, err := ParseRule(in)
		var re *RuleError
		if !errors.As(err, &re) {
			t.Errorf("ParseRule(%q) = %v, want a *RuleError", in, err)
			continue
		}
		if re.Rule != in || !strings.Contains(err.Error(), "malformed rule") {
			t.Errorf("error %q does not name the rule %q", err, in)
		}
	}
}

func TestNewReportsMalformedRules(t *testing.T) {
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(ls", "Read"}, Deny: []string{"Edit(x"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{t.TempDir()}})
	if err == nil || c == nil {
		t.Fatalf("New = %v, %v; want a checker and an error", c, err)
	}
	for _, r := range []string{`"Bash(ls"`, `"Edit(x"`} {
		if !strings.Contains(err.Error(), r) {
			t.Errorf("error %q does not name %s", err, r)
		}
	}
}

func TestInertRulesWarn(t *testing.T) {
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI,
		Allow: []string{"*", "mcp__*", "Write(src/**)", "Glob(src/**)", "Bash(run_in_background:true)", "WebSearch(x)", "Bash(command:ls)"},
		Deny:  []string{"TodoWrite(file_path:x)"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Warnings()); got != 8 {
		t.Errorf("got %d warnings, want 8: %q", got, c.Warnings())
	}
}

func TestBashPatterns(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"npm run build", []string{"npm run build", "npm  run   build", `npm "run" build`}, []string{"npm run build:prod", "npm run", "npm run build x"}},
		{"git status:*", []string{"git status", "git status --short", "git status -- a b"}, []string{"git statusx", "git stat", "git  -C x status"}},
		{"ls *", []string{"ls", "ls -la", "ls a b"}, []string{"lsof", "lsx -a"}},
		{"ls*", []string{"ls", "lsof", "ls -la"}, []string{"l", "xls"}},
		{"git * main", []string{"git push origin main", "git merge main", "git a b c main"}, []string{"git push origin mainx", "git main", "git push origin main2"}},
		{`git commit -m "fix"`, []string{"git commit -m fix", "git commit -m 'fix'"}, []string{"git commit -m fixes", "git commit -m 'fix it'"}},
		{"echo 'a b'", []string{`echo "a b"`, `echo a\ b`}, []string{"echo a b"}},
	}
	for _, tt := range tests {
		p := compileBashPattern(tt.pattern)
		for _, cmd := range tt.yes {
			a := analyzeBash(cmd, "/", "")
			if len(a.cmds) != 1 || !p.match(renderCommand(a.cmds[0].assigns, a.cmds[0].args, false, true)) {
				t.Errorf("Bash(%s) should match %q", tt.pattern, cmd)
			}
		}
		for _, cmd := range tt.no {
			a := analyzeBash(cmd, "/", "")
			if len(a.cmds) == 1 && p.match(renderCommand(a.cmds[0].assigns, a.cmds[0].args, false, true)) {
				t.Errorf("Bash(%s) should not match %q", tt.pattern, cmd)
			}
		}
	}
}

func TestWildcardMayMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		may        bool
	}{
		{"git push *", "git " + unknownWord, true},
		{"git push *", "git " + unknownWord + " --force", true},
		{"git push *", "git pull " + unknownWord, false},
		{"rm *", unknownWord + " -rf x", true},
		{"a*b", "x" + unknownWord, false},
		{"*", "", true},
		{"a", unknownWord, true},
		{"ab", unknownWord + "c", false},
	}
	for _, tt := range tests {
		if got := newWildcard(tt.pattern).mayMatch(tt.s); got != tt.may {
			t.Errorf("mayMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.may)
		}
	}
}

func TestDomainPatterns(t *testing.T) {
	tests := []struct {
		spec    string
		yes, no []string
	}{
		{"example.com", []string{"example.com"}, []string{"a.example.com", "example.com.evil", "xexample.com"}},
		{"*.example.com", []string{"a.example.com", "a.b.example.com"}, []string{"example.com", "aexample.com"}},
		{"api.*.example.com", []string{"api.eu.example.com"}, []string{"api.a.b.example.com", "web.eu.example.com"}},
		{"*", []string{"anything.org"}, nil},
	}
	for _, tt := range tests {
		p, err := compileDomain(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tt.yes {
			if !p.match(h) {
				t.Errorf("domain:%s should match %s", tt.spec, h)
			}
		}
		for _, h := range tt.no {
			if p.match(h) {
				t.Errorf("domain:%s should not match %s", tt.spec, h)
			}
		}
	}
}
