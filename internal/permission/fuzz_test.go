package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

var fuzzCommands = []string{
	"; touch pwned", " && rm -rf /", " || x", " | tee f", "\nrm x", " $(rm x)", " `rm x`", " <(rm x)", " > f", " >> f",
	" 2>&1", " > /dev/null", "; eval 'rm x'", "; bash -c 'rm x'", "; X=rm; $X y", "; PATH=. git", "; alias a=b",
	"; f() { rm x; }; f", " ${x:-$(rm x)}", " $((1+2))", "; for i in 1; do rm x; done", " & rm x", "; cd .. && rm x",
	"; timeout 5 rm x", "; env rm x", "; xargs rm", " \"; rm x\"", " '; rm x'", " \\; rm x", "; $'\\x72m' x",
	"; {rm,x}", "; r?m x", "; ｒｍ x", "\u200b; rm x", "; echo ok", "; timeout 5 echo y", "; y=1", " <<EOF\n$(rm x)\nEOF",
	"; sh -c 'echo a; rm b'", "; exec > f", "; coproc rm x", "\r; rm x", " #; rm x",
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(ls:*)", `Bash(a\(b\))`, "Read(//x/**)", "WebFetch(domain:*.a.b)", "mcp__a__*",
		"Agent(model:opus)", "Bash(run_in_background:true)", "Edit(~/x/[a-z]*)", "Skill(x *)", "Bash((", "a)b("} {
		f.Add(s)
	}
	bases := pathBases{cwd: "/w", home: "/h"}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRule(s)
		if err != nil {
			return
		}
		again, err := ParseRule(v.String())
		if err != nil || again != v {
			t.Fatalf("%q parsed as %#v, which renders as %q and parses back as %#v, %v", s, v, v.String(), again, err)
		}
		for _, b := range []Behavior{Allow, Deny, Ask} {
			r, err := compileRule(v, b, SourceCLI, bases, false)
			if err != nil {
				continue
			}
			r.appliesTo("Bash")
			if r.bash != nil {
				r.bash.match("ls -la")
				r.bash.mayMatch("ls " + unknownWord)
			}
			if r.path != nil {
				r.path.match("/w/x")
			}
		}
	})
}

func FuzzBashSplit(f *testing.F) {
	for _, s := range fuzzCommands {
		f.Add("echo x" + s)
	}
	dir := f.TempDir()
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(git status:*)", "Edit(src/**)"},
		Deny: []string{"Bash(rm:*)", "Read(secrets/**)"}, Ask: []string{"Bash(git push:*)"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{dir}, Home: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := analyzeBash(cmd, dir, dir)
		for _, x := range a.cmds {
			if len(x.args) > 0 {
				denyForms(x.args)
				form, _ := allowForm(x.args)
				if len(form) > 0 {
					readOnlyCheck(form)
					parseFSCommand(form)
				}
			}
		}
		in, _ := json.Marshal(map[string]string{"command": cmd})
		d := c.Decide(context.Background(), Call{Tool: "Bash", Input: in})
		if d.Behavior == Allow && strings.Contains(cmd, "rm ") && !strings.ContainsAny(cmd, "'\"\\#$`") {
			// A plain "rm " word can only be allowed as an argument.
			for _, x := range a.cmds {
				if form, _ := allowForm(x.args); len(form) > 0 && form[0].is("rm") {
					t.Fatalf("%q allowed although rm is denied", cmd)
				}
			}
		}
	})
}

func FuzzPathMatch(f *testing.F) {
	for _, s := range [][2]string{{"src/**", "/w/src/a"}, {"//etc/*", "/etc/x"}, {"~/a", "/h/a"}, {"/x/[a-", "/w/x"},
		{"*.{go,md}", "/a/b.go"}, {"./a/../b", "/w/b"}, {"\\*", "/w/*"}} {
		f.Add(s[0], s[1])
	}
	bases := pathBases{cwd: "/w", source: "/p", home: "/h"}
	f.Fuzz(func(t *testing.T, spec, p string) {
		for _, b := range []Behavior{Allow, Deny} {
			if pp, err := compilePathPattern(spec, b, bases, false); err == nil {
				pp.match(p)
				pp.match(filepath.Clean("/" + p))
			}
		}
		if r, err := Resolve("/w", p); err == nil && !filepath.IsAbs(r) {
			t.Fatalf("Resolve(/w, %q) = %q, not absolute", p, r)
		}
		candidates("/" + p)
		isProtected(p, false)
	})
}

// FuzzEchoRule checks that a fuzzed command never widens what a rule
// allows. With the built-in read-only commands switched off and the only
// rule Bash(echo:*), whatever Decide allows for "echo x" followed by fuzzed
// text must consist of echo commands only (run directly, through wrappers
// that the reference strips, or in eval / sh -c payloads that themselves
// hold only echo commands) and assignments of harmless variables, and it
// must not redirect output to any file but a device.
func FuzzEchoRule(f *testing.F) {
	for _, s := range fuzzCommands {
		f.Add(s)
	}
	dir := f.TempDir()
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(echo:*)"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{dir}, Home: dir})
	if err != nil {
		f.Fatal(err)
	}
	c.cur.Load().noReadOnly = true
	f.Fuzz(func(t *testing.T, suffix string) {
		in, _ := json.Marshal(map[string]string{"command": "echo x" + suffix})
		if c.Decide(context.Background(), Call{Tool: "Bash", Input: in}).Behavior != Allow {
			return
		}
		var sent struct{ Command string }
		_ = json.Unmarshal(in, &sent) // what the checker saw (JSON replaces invalid UTF-8)
		cmd := sent.Command
		a := analyzeBash(cmd, dir, dir)
		if a.unparsed || len(a.problems) > 0 {
			t.Fatalf("%q allowed with problems %q", cmd, a.problems)
		}
		for _, x := range a.cmds {
			switch {
			case x.transparent:
			case len(x.args) == 0:
				for _, as := range x.assigns {
					if !harmlessVar(as.name) {
						t.Fatalf("%q allowed with an assignment of %s", cmd, as.name)
					}
				}
			default:
				if form, _ := allowForm(x.args); !form[0].is("echo") {
					t.Fatalf("%q allowed with the command %q", cmd, x.src)
				}
			}
		}
		for _, r := range a.redirs {
			if t2, ok := r.target.lit(); r.write && !(ok && devices()[t2]) {
				t.Fatalf("%q allowed with a redirection to %q", cmd, t2)
			}
		}
		// The same facts, read straight off the syntax tree.
		checkTree(t, cmd, 0)
	})
}

// checkTree verifies, independently of the analyzer, that every simple
// command in cmd names echo, a stripped wrapper, eval or a shell, and that
// no redirection writes to a file.
func checkTree(t *testing.T, cmd string, depth int) {
	file, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		t.Fatalf("%q allowed but does not parse: %v", cmd, err)
	}
	heads := map[string]bool{"echo": true, "eval": true, "bash": true, "sh": true, "dash": true, "timeout": true, "time": true,
		"nice": true, "nohup": true, "stdbuf": true, "command": true, "builtin": true, "noglob": true, "exec": true, "xargs": true}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			head, sure := plainWord(n.Args[0])
			if sure && !heads[head] {
				t.Fatalf("%q allowed with a command named %q", cmd, head)
			}
			// Payloads of eval and sh -c hold commands too.
			var words []string
			for _, a := range n.Args[1:] {
				s, ok := plainWord(a)
				if !ok {
					return true
				}
				words = append(words, s)
			}
			if depth < 4 && head == "eval" {
				checkTree(t, strings.Join(words, " "), depth+1)
			}
			if depth < 4 && (head == "sh" || head == "bash" || head == "dash") && len(words) > 1 && words[0] == "-c" {
				checkTree(t, words[1], depth+1)
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
				if target, sure := plainWord(n.Word); sure && !devices()[target] {
					t.Fatalf("%q allowed with a redirection to %q", cmd, target)
				}
			}
		case *syntax.FuncDecl, *syntax.ArithmCmd, *syntax.DeclClause, *syntax.LetClause, *syntax.CoprocClause:
			t.Fatalf("%q allowed with a %T", cmd, n)
		}
		return true
	})
}

// plainWord removes quotes from a word made of literals and quotes only;
// sure is false for anything else.
func plainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
