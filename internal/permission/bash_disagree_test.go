package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// disagreeCases are texts that mvdan.cc/sh and bash 5.2 read differently
// (or could): each must be unparsed, so that it is asked in every mode.
var disagreeCases = []string{
	"echo hi # note \\\ntouch x",
	"echo hi # note\\\ntouch x",
	"# \\\ntouch x",
	"echo a; # x \\\\\\\ntouch x",
	"cat <<EOF\n\\\nEOF\ntouch x\nEOF",
	"cat <<EOF\nline\\\nEOF\ntouch x\nEOF",
	"cat <<'EOF'#x\nhello\nEOF\ntouch x\nEOF#x",
	"cat <<EOF#x\nhello\nEOF#x",
	"cat <<'EOF'x\nEOFx",
	"cat <<E\"O\"F\nbody\nEOF",
	"cat <<EO'F'\nbody\nEOF",
	"cat <<$'EOF'\nbody\nEOF",
	"cat <<$x\nbody\n$x",
	"cat <<E\\OF\nbody\nEOF",
	"cat <<'E OF'\nbody\nE OF",
	"cat <<E\\\nOF\nbody\nEOF",
	"cat <<-'EOF'\\\nbody\nEOF",
	"cat <<EOF\n${x:-\nEOF\ntouch x\n}\nEOF",
	"time -- touch x",
	"time -p -- touch x",
	// time covers the whole pipeline or list: the "--" is the first word
	// of its first command (found by the random differential run).
	"time -- env bash -c 't\\ouch x' | wc -l a.txt",
	"time -- touch x | cat",
	"time -p -- touch x && echo ok",
	"time ! -- touch x || true",
	// A line continuation in a =~ pattern: bash joins the lines, so "$\⏎("
	// opens a command substitution; the parser keeps it as text.
	"[[ x =~ $\\\n(touch x) ]]",
	"{ [[ x =~ $\\\n({touch,x}) ]]; }",
	// More line continuations splitting a token bash joins.
	"x='a[$(touch x)]'; (\\\n( x ))",
	"echo $'\\'' ; $\\\n\\\n'\\x74ouch' x",
	"cat <\\\n(touch x)",
	"coproc bash <<<'touch x'",
	"coproc touch MARK_2080 | ls", // found by TestDifferential: the parser named the coprocess "touch"
	"coproc bash >x <<<'touch x'",
	"cat <<'EOF'#x\nEOF#x\ntouch x\nEOF",
}

// agreeCases are ordinary texts that must stay analysable.
var agreeCases = []string{
	"echo hi # note",
	"echo hi # a \\ b",
	"echo a \\\n  b # c",
	"echo '# \\\n' x",
	"cat <<EOF\nhi\nEOF",
	"cat <<'EOF'\n$(x) \\\nEOF",
	"cat <<\"EOF\"\nhi\nEOF",
	"cat <<\\EOF\nhi\nEOF",
	"cat <<-EOF\n\thi\n\tEOF",
	"cat <<EOF <<EOF2\na\nEOF\nb\nEOF2",
	"cat <<EOF\n\nEOF",
	"cat <<EOF\nEOF",
	"echo \"$(cat <<'EOF'\nFix the parser\n\nDetails.\nEOF\n)\"",
	"for f in *.go; do echo $f; done # all",
	"echo a#b # c;#d",
}

func TestDisagreements(t *testing.T) {
	for _, cmd := range disagreeCases {
		a := analyzeBash(cmd, "/w", "/h")
		if !a.unparsed || len(a.problems) == 0 {
			t.Errorf("%q: not flagged (problems %q)", cmd, a.problems)
		}
	}
	for _, cmd := range agreeCases {
		a := analyzeBash(cmd, "/w", "/h")
		if a.unparsed || len(a.problems) != 0 {
			t.Errorf("%q: unexpected problems %q", cmd, a.problems)
		}
	}
}

// TestDisagreementsDecide: with Bash(echo:*) allowed, the parse
// disagreements are asked, ordinary lines allowed.
func TestDisagreementsDecide(t *testing.T) {
	dir := t.TempDir()
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(echo:*)", "Bash(git commit:*)"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{dir}, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(cmd string) Behavior {
		in, err := jsonCommand(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return c.Decide(context.Background(), Call{Tool: "Bash", Input: in}).Behavior
	}
	for _, cmd := range disagreeCases {
		if got := decide(cmd); got == Allow {
			t.Errorf("%q allowed", cmd)
		}
	}
	for _, cmd := range []string{"echo hi # note", "cat <<EOF\nhi\nEOF", "for f in *.go; do echo $f; done",
		"echo a \\\n  b # c", agreeCases[len(agreeCases)-2], "cat <<'EOF'\n$(x) \\\nEOF", "cat <<-EOF\n\thi\n\tEOF"} {
		if got := decide(cmd); got != Allow {
			t.Errorf("%q: got %s, want allow", cmd, got)
		}
	}
}

// substPositions are the places of the syntax tree where a command
// substitution runs; touch marks the command.
var substPositions = []string{
	"echo ${a[$(touch m)]}",
	"echo ${x:$(touch m)}",
	"echo ${x:0:$(touch m)}",
	"echo ${x:-$(touch m)}",
	"echo ${x:=$(touch m)}",
	"echo ${x/$(touch m)/y}",
	"echo ${x//y/$(touch m)}",
	"echo ${x#$(touch m)}",
	"echo ${#a[$(touch m)]}",
	"echo ${a[@]:$(touch m)}",
	"echo $(( $(touch m) ))",
	"echo $(( a[$(touch m)] ))",
	"echo $[ $(touch m) ]",
	"(( $(touch m) ))",
	"let x=$(touch m)",
	"for ((i=$(touch m); i<0; i++)); do :; done",
	"[[ -v a[$(touch m)] ]]",
	"[[ 1 -eq $(touch m) ]]",
	"[[ x =~ $(touch m) ]]",
	"declare a[$(touch m)]",
	"declare x=$(touch m)",
	"a[$(touch m)]=1",
	"a=([$(touch m)]=1)",
	"x=$(touch m) echo",
	"case $(touch m) in *) ;; esac",
	"case x in $(touch m)) ;; esac",
	"for x in $(touch m); do :; done",
	"cat <<EOF\n$(touch m)\nEOF",
	"cat <<<$(touch m)",
	"echo <(touch m)",
	"echo >(touch m)",
	"echo `touch m`",
	"echo \"${x:-\"$(touch m)\"}\"",
	"echo >$(touch m)",
	"select x in $(touch m); do :; done",
	"coproc $(touch m)",
	"f() { :; } >$(touch m)",
}

// TestSubstitutionsEverywhere: a tree walk finds a command substitution in
// each position, and the analysis lists its command (so that deny rules
// are matched against it), both through the analyzer and through sweep
// alone.
func TestSubstitutionsEverywhere(t *testing.T) {
	for _, cmd := range substPositions {
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if err != nil {
			t.Errorf("%q: %v", cmd, err)
			continue
		}
		found := 0
		syntax.Walk(f, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				found++
			}
			return true
		})
		if found != 1 {
			t.Errorf("%q: the walk finds %d substitutions, want 1", cmd, found)
		}
		an := analyzeBash(cmd, "/w", "/h")
		if got := names(an); !contains(got, "touch") {
			t.Errorf("%q: the analysis lists %q, without touch", cmd, got)
		}
		for _, p := range an.problems {
			if strings.Contains(p, "could not place") {
				t.Errorf("%q: the analyzer itself missed the substitution (%s)", cmd, p)
			}
		}
		// sweep alone, as if the analyzer had missed everything
		a := &analyzer{seen: map[syntax.Node]bool{}, cwds: []string{"/w"}}
		a.text = cmd
		a.sweep(f)
		if got := names(&a.bashAnalysis); !contains(got, "touch") {
			t.Errorf("%q: sweep lists %q, without touch", cmd, got)
		}
	}
}

// hiddenCases run text as code that no rule can be checked against.
var hiddenCases = []string{
	"trap 'touch m' EXIT",
	"trap -- 'touch m' DEBUG",
	"trap \"$x\" EXIT",
	"PS4='$(touch m)'; set -x; echo",
	"PS4='$(touch m)' && set -x",
	"export PS4='$(touch m)'",
	"declare PROMPT_COMMAND=x",
	"BASH_ENV=x bash -c echo",
	"env BASH_ENV=x bash -c echo",
	"env 'BASH_FUNC_echo%%=() { touch m; }' bash -c echo",
	"env BASH_FUNC_echo%%=\"$x\" bash -c echo",
	"sudo \"PS4=$x\" bash -xc echo",
	"GIT_PAGER='touch m' git log",
	"BASH_CMDS[ls]=/usr/bin/touch; ls m",
	"echo ${PS4:=x}",
	"x='a[$(touch m)]'; echo $((x))",
	"echo $((x + 1))",
	"(( x ))",
	"let x",
	"for ((i=x; i<0; i++)); do :; done",
	"x='a[$(touch m)]'; [[ $x -eq 1 ]]",
	"echo ${a[i]}",
	"echo ${a[$i]}",
	"echo ${a['$(touch m)']}",
	"echo ${x:i}",
	"echo ${x:0:n}",
	"echo ${!x}",
	"echo ${x@P}",
	"a[i]=1",
	"a=([i]=1)",
	"[ -v 'a[$(touch m)]' ]",
	"test -v 'a[$(touch m)]'",
	"test -v \"$x\"",
	"[[ -v a[i] ]]",
	"[[ -v $x ]]",
	"printf -v 'a[$(touch m)]' x",
	"printf -v PS4 x",
	"printf -va[i] x",
	"read 'a[$(touch m)]' <<<v",
	"read -a 'a[i]' <<<v",
	"read \"$x\" <<<v",
	"read PS4 <<<v",
	"mapfile -C 'touch m' -c 1 <<<v",
	"mapfile 'a[i]' <<<v",
	"getopts a 'a[i]'",
	"wait -p 'a[i]' -n",
	"unset 'a[$(touch m)]'",
	"declare -n r=x",
	"local -n r=x",
	"declare -i x",
	"typeset -i x",
	"export -f f",
	"declare \"$x\"",
	"hash -p /usr/bin/touch ls",
	"alias ls=touch",
	"shopt -s expand_aliases",
	"enable -n echo",
	"complete -C 'touch m' x",
	"compgen -C 'touch m' x",
	"fc -s",
	"bind -x '\"a\":touch m'",
	"command printf -v 'a[i]' x",
	"eval 'trap \"touch m\" EXIT'",
	"bash -c 'PS4=x'",
	"for PS4 in x; do set -x; done",
	"set -k; bash -c echo BASH_ENV=x",
	"set -o keyword",
}

// notHiddenCases are common commands that run no text as code.
var notHiddenCases = []string{
	"echo $((1 + 2)) $((2#101)) $(( $# + 1 ))",
	"echo ${a[0]} ${a[@]} ${!a[@]} ${!pre*} ${x:1:2} ${x: -1}",
	"echo ${x@Q} ${x@U} ${x:-y} ${x#a} ${#x}",
	"read -r line", "read -r -a arr", "read -d '' -r x", "printf -v x %s y", "printf '%s\\n' a",
	"trap -l", "trap -p", "trap", "trap '' INT", "trap - INT", "set -- \"$@\"", "set -e -- a $x", "set -o pipefail", "declare x=1", "x=1", "[[ -v x ]]", "test -v x", "[ -f x ]", "[[ 1 -eq 2 ]]",
	"shopt -s nullglob globstar", "hash -r", "mapfile -t lines <x", "getopts ab opt", "wait", "unset x",
	"for i in 1 2; do echo $i; done", "LANG=C sort x", "env LANG=C sort x", "local x=1", "export X=1",
}

func TestHiddenCode(t *testing.T) {
	for _, cmd := range hiddenCases {
		a := analyzeBash(cmd, "/w", "/h")
		if a.hidden == "" {
			t.Errorf("%q: not hidden code (problems %q)", cmd, a.problems)
		}
		if len(a.problems) == 0 {
			t.Errorf("%q: hidden code without a problem", cmd)
		}
	}
	for _, cmd := range notHiddenCases {
		if a := analyzeBash(cmd, "/w", "/h"); a.hidden != "" {
			t.Errorf("%q: hidden code %q", cmd, a.hidden)
		}
	}
}

// TestHiddenCodeDecide: with Bash allowed as a whole, text run as code is
// asked as soon as any deny or ask rule exists, in every mode; without
// such a rule the whole-tool rule keeps allowing it.
func TestHiddenCodeDecide(t *testing.T) {
	dir := t.TempDir()
	type config struct {
		name             string
		mode             Mode
		allow, deny, ask []string
		want             Behavior
	}
	configs := []config{
		{name: "bash allowed, touch denied", allow: []string{"Bash"}, deny: []string{"Bash(touch:*)"}, want: Ask},
		{name: "bash allowed, touch asked", allow: []string{"Bash"}, ask: []string{"Bash(touch:*)"}, want: Ask},
		{name: "bash allowed, read denied", allow: []string{"Bash"}, deny: []string{"Read(secrets/**)"}, want: Ask},
		{name: "bypass, touch denied", mode: ModeBypass, deny: []string{"Bash(touch:*)"}, want: Ask},
		{name: "echo allowed", allow: []string{"Bash(echo:*)"}, want: Ask},
		{name: "bash allowed", allow: []string{"Bash"}, want: Allow},
	}
	for _, cf := range configs {
		c, err := New(Config{Mode: cf.mode, Rules: RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: cf.allow,
			Deny: cf.deny, Ask: cf.ask}}}, Dirs: []string{dir}, Home: dir, AllowBypass: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cmd := range hiddenCases {
			in, err := jsonCommand(cmd)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Decide(context.Background(), Call{Tool: "Bash", Input: in})
			if d.Behavior != cf.want && !(cf.want == Ask && d.Behavior == Deny) {
				got = append(got, cmd+" → "+string(d.Behavior))
			}
		}
		if diff := cmp.Diff([]string(nil), got); diff != "" {
			t.Errorf("%s: want %s (-want +got):\n%s", cf.name, cf.want, diff)
		}
	}
}

// FuzzSweep fuzzes the splitter with the class 1 and 5 cases as seeds: it
// must not panic, the analyzer itself must reach every substitution (sweep
// finding one means the analysis had a blind spot), and hidden code is
// always a problem.
func FuzzSweep(f *testing.F) {
	for _, list := range [][]string{substPositions, hiddenCases, notHiddenCases, disagreeCases, agreeCases} {
		for _, s := range list {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := analyzeBash(cmd, "/w", "/h")
		for _, p := range a.problems {
			if strings.Contains(p, "could not place") {
				t.Fatalf("%q: %s", cmd, p)
			}
		}
		if a.hidden != "" && len(a.problems) == 0 {
			t.Fatalf("%q: hidden code without a problem", cmd)
		}
		if strings.Contains(cmd, "#") && strings.Contains(cmd, "\\\n") && !a.unparsed {
			// a comment that ends in a backslash must never be analysed as
			// the parser reads it
			f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
			if err == nil {
				syntax.Walk(f, func(n syntax.Node) bool {
					if c, ok := n.(*syntax.Comment); ok && strings.HasSuffix(c.Text, "\\") {
						t.Fatalf("%q: comment %q ending in a backslash accepted", cmd, c.Text)
					}
					return true
				})
			}
		}
	})
}
