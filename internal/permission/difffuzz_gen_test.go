package permission

import (
	"fmt"
	"math/rand"
	"strings"
)

// diffGen generates command lines from a grammar of the shell constructs
// where a parser and bash are most likely to read a text differently:
// comments, here-documents, line continuations, quoting, expansions,
// substitutions in subscripts, slices and defaults, arithmetic, nesting,
// and the builtins that run text as code. Each line embeds marker commands
// (touch, mkdir, a redirection to a new file) among harmless ones, so that
// running it in bash shows whether a marker ran.
type diffGen struct {
	r *rand.Rand
	n int // marker counter
}

func newDiffGen(seed int64) *diffGen { return &diffGen{r: rand.New(rand.NewSource(seed))} }

func (g *diffGen) pick(list ...string) string { return list[g.r.Intn(len(list))] }

func (g *diffGen) chance(p float64) bool { return g.r.Float64() < p }

// marker is a command that leaves a trace.
func (g *diffGen) marker() string {
	g.n++
	n := g.n
	return g.pick(
		fmt.Sprintf("touch MARK_%d", n),
		fmt.Sprintf("touch MARK_%d", n),
		fmt.Sprintf("mkdir MARK_%d", n),
		fmt.Sprintf(">MARK_%d", n),
		fmt.Sprintf("echo x >MARK_%d", n),
		fmt.Sprintf("echo x>>MARK_%d", n),
		fmt.Sprintf("cp a.txt MARK_%d", n),
		fmt.Sprintf("tee MARK_%d </dev/null", n),
		fmt.Sprintf("command touch MARK_%d", n),
		fmt.Sprintf("env touch MARK_%d", n),
		fmt.Sprintf("t\\ouch MARK_%d", n),
		fmt.Sprintf("t'o'uch MARK_%d", n),
		fmt.Sprintf("$'\\x74ouch' MARK_%d", n),
		fmt.Sprintf("\"touch\" MARK_%d", n),
		fmt.Sprintf("{touch,MARK_%d}", n),
		fmt.Sprintf("\\touch MARK_%d", n),
		fmt.Sprintf("exec touch MARK_%d", n),
		fmt.Sprintf("xargs touch <<<MARK_%d", n),
		fmt.Sprintf("find . -maxdepth 0 -exec touch MARK_%d \\;", n),
		fmt.Sprintf("echo x | tee MARK_%d", n),
	)
}

// safe is a command the test checkers allow.
func (g *diffGen) safe() string {
	return g.pick("echo a", `echo "b c"`, "ls", "cat a.txt", "true", "pwd", "echo $HOME", "wc -l a.txt", ":",
		`printf '%s\n' x`, "grep -n alpha a.txt", "head -n1 a.txt", "echo", "echo '#x'", "ls sub", "echo $#",
		"echo ${x:-y}", `echo "$(echo z)"`, "echo `echo q`", "cat <<<hi", "echo {a,b}", "echo ~")
}

// cmd is a command, harmless or a marker.
func (g *diffGen) cmd(depth int) string {
	if depth <= 0 || g.chance(0.35) {
		if g.chance(0.5) {
			return g.marker()
		}
		return g.safe()
	}
	switch g.r.Intn(14) {
	case 0:
		return g.comment(depth)
	case 1:
		return g.heredoc(depth)
	case 2:
		return g.continuation(depth)
	case 3, 4:
		return g.quoted(depth)
	case 5:
		return g.expansion(depth)
	case 6:
		return g.compound(depth)
	case 7:
		return g.payload(depth)
	case 8:
		return g.textAsCode()
	case 9:
		return g.arith()
	case 10:
		return g.test(depth)
	case 11:
		return g.cmd(depth-1) + g.sep() + g.cmd(depth-1)
	case 12:
		return g.odd(depth)
	default:
		return g.safe() + g.sep() + g.cmd(depth-1)
	}
}

func (g *diffGen) sep() string {
	return g.pick("; ", " && ", " || ", " | ", "\n", " & ", ";", " |& ", "\n\n", " ;\n")
}

// comment hides a command after a comment whose line ends in something
// that might continue it.
func (g *diffGen) comment(depth int) string {
	text := g.pick("", " note", " it's", ` "q`, " $(", " `", " \\", " a\\", " \\\\", " x \\ ", " ${", " <<EOF",
		" )", " }", " '", " #", " \\\\\\", " $'\\'", " esac", " fi", " EOF")
	end := g.pick("\n", "\\\n", "\\\\\n", "\n", " \\\n", "\\\n\\\n")
	pre := g.pick(g.safe()+" #", g.safe()+"  #", "#", g.safe()+";#", "{ "+g.safe()+"; } #", g.safe()+" # a #")
	return pre + text + end + g.cmd(depth-1)
}

// heredoc builds a here-document with unusual delimiters and bodies.
func (g *diffGen) heredoc(depth int) string {
	op := g.pick("<<", "<<-", "<< ", "<<- ", "<<\t")
	delims := [][2]string{ // as written, as it closes the body
		{"EOF", "EOF"}, {"'EOF'", "EOF"}, {`"EOF"`, "EOF"}, {`\EOF`, "EOF"}, {`E"O"F`, "EOF"}, {"'EOF'#x", "EOF"},
		{"EOF#x", "EOF"}, {"'EOF'x", "EOF"}, {"'E OF'", "E OF"}, {`E\OF`, "EOF"}, {"'EOF'\\", "EOF"},
		{"$'EOF'", "EOF"}, {"EOF;", "EOF"}, {"EO'F'", "EOF"}, {"'EOF' #x", "EOF"}, {"E$x", "E$x"}, {"'EOF'\"\"", "EOF"},
		{"-", "-"}, {"'EOF\\'", "EOF\\"}, {"${x}", "${x}"}, {"E{a,b}", "E{a,b}"}, {"E\\\nOF", "EOF"}, {"\"EOF\"\\\n", "EOF"},
		{"'EOF'", "EOF#x"}, {"EOF", "EOF "}, {"EOF", "\tEOF"}, {"EOF", "EOF\\"}, {`$"EOF"`, "EOF"},
	}
	d := delims[g.r.Intn(len(delims))]
	head := g.pick("cat ", "cat ", "echo a ", ": ", "wc -l ", "read -r x ")
	rest := g.pick("", "", " | cat", "; "+g.safe(), " && "+g.cmd(depth-1), " # c", " \\\n", " |\n", " $(", " # x\\")
	var body []string
	for i, k := 0, g.r.Intn(4); i < k; i++ {
		body = append(body, g.pick("line", "\\", "x\\", "\\\\", "$(echo b)", "`echo c`", "EOF ", " EOF", "\tEOF",
			"EOF\\", "\\EOF", "'", `"`, "$(", ")", "$("+g.marker()+")", "`"+g.marker()+"`", g.marker(), "${x:-$("+g.marker()+")}",
			"EO\\", "F", "#"+g.marker(), "EOF", "EOF;", "${x:-", "}", "$(echo", "EOF#x", "EOF\t", "\tEOF\\"))
	}
	closer := d[1]
	if g.chance(0.15) {
		closer = g.pick("EOF", "'EOF'", "EOF'", "EOF#x", "EOF;", "\tEOF", "EOF )")
	}
	after := g.cmd(depth - 1)
	if g.chance(0.3) {
		after = after + "\n" + g.pick("EOF", d[1], g.cmd(depth-1))
	}
	line := head + op + d[0] + rest + "\n" + strings.Join(body, "\n")
	if len(body) > 0 {
		line += "\n"
	}
	line += closer + "\n" + after
	if g.chance(0.2) { // inside a substitution, as commit messages are written
		line = "echo \"$(" + line + "\n)\""
	}
	return line
}

// continuation puts a backslash-newline somewhere in a command.
func (g *diffGen) continuation(depth int) string {
	c := g.cmd(depth - 1)
	if len(c) == 0 {
		return c
	}
	i := g.r.Intn(len(c) + 1)
	return c[:i] + g.pick("\\\n", "\\\n\\\n", "\\\\\n", " \\\n ") + c[i:]
}

// quoted wraps a command in quotes with escapes that may end them early.
func (g *diffGen) quoted(depth int) string {
	m := g.cmd(depth - 1)
	return g.pick(
		"echo '"+m+"'",
		`echo "`+strings.ReplaceAll(m, `"`, `\"`)+`"`,
		"echo $'"+m+"'",
		"echo $'\\'; "+m+"; '",
		"echo $'\\\\'; "+m+"; '",
		"echo 'a\\'; "+m+"; '",
		`echo "a\\"; `+m+`; "`,
		`echo "a\"; `+m+`; "`,
		"echo $'\\c'; "+m,
		"echo $'\\c''; "+m+"'",
		"echo $'\\x27'; "+m+"; '",
		"echo $'\\u0027'; "+m+"; '",
		"echo \"'\"; "+m,
		"echo '\"'; "+m,
		`echo $"`+m+`"`,
		"echo `echo '\\`'`; "+m,
		"echo `echo \\`"+m+"\\``",
		"echo \"`"+m+"`\"",
		"echo \\'; "+m,
		"echo a\\\\; "+m,
		"echo ${x:-'}'}; "+m,
		"echo \"${x:-\"}\"}\"; "+m,
		"echo ${x:-\"'\"}; "+m,
		"echo ${x#'}'}; "+m,
		"echo '"+m+"'\\''x'",
	)
}

// expansion hides a command in a parameter expansion or substitution.
func (g *diffGen) expansion(depth int) string {
	m := g.cmd(depth - 1)
	if strings.Contains(m, "\n") {
		m = g.marker()
	}
	return g.pick(
		"echo ${a[$("+m+")]}",
		"echo ${x:$("+m+")}",
		"echo ${x:0:$("+m+")}",
		"echo ${x:-$("+m+")}",
		"echo ${x:=$("+m+")}",
		"echo ${x:+$("+m+")}",
		"echo ${x/$("+m+")/y}",
		"echo ${x//y/$("+m+")}",
		"echo ${x#$("+m+")}",
		"echo ${x%`"+m+"`}",
		"echo $(( $("+m+") ))",
		"echo $(( a[$("+m+")] ))",
		"echo $[ $("+m+") ]",
		"echo ${#a[$("+m+")]}",
		"echo ${!a[$("+m+")]}",
		"echo ${a[@]:$("+m+")}",
		"echo \"${x:-$("+m+")}\"",
		"echo \"${a[`"+m+"`]}\"",
		"echo $("+m+")",
		"echo <("+m+")",
		"cat >("+m+")",
		"echo \"$("+m+")\"",
		"echo ${x:-${y:-$("+m+")}}",
		"x=$("+m+")",
		"x=${y:-$("+m+")} ",
		"echo ${x@P}",
		"echo ${x@Q} $("+m+")",
		"echo ${x^^$("+m+")}",
		"echo ${x,,`"+m+"`}",
		"for x in $("+m+"); do echo $x; done",
		"case $("+m+") in *) echo;; esac",
		"echo $(echo $("+m+"))",
		"echo $( ("+m+") )",
		"echo $((echo a); "+m+")",
		"echo $(case x in x) "+m+";; esac)",
		"echo $(echo ')' # "+m+"\n)",
		"echo $(# )\n"+m+")",
		"echo $(cat <<EOF\n)\nEOF\n); "+m,
		"echo ${x:-\n"+m+"\n}",
		"echo \"${x:-\n\"}\"; "+m,
	)
}

// compound nests a command in compound commands.
func (g *diffGen) compound(depth int) string {
	m := g.cmd(depth - 1)
	return g.pick(
		"{ "+m+"; }",
		"( "+m+" )",
		"("+m+")",
		"if true; then "+m+"; fi",
		"if "+m+"; then :; fi",
		"for f in a; do "+m+"; done",
		"for f in *.txt; do echo $f; done; "+m,
		"while false; do "+m+"; done",
		"until true; do :; done; "+m,
		"case a in a) "+m+";; esac",
		"case a in (a) "+m+";& b) echo;; esac",
		"! "+m,
		"time "+m,
		"time -p "+m,
		"time -- "+m,
		"time -p -- "+m,
		"time -p -p "+m,
		"{ echo }; "+m+"; }",
		"{ echo; } }; "+m,
		"f() { "+m+"; }",
		"f() { echo; }; f; "+m,
		"function f { "+m+"; }; f",
		"coproc "+m,
		"coproc c { "+m+"; }",
		"select x in a; do "+m+"; done </dev/null",
		"[[ a ]] && "+m,
		"((1)) && "+m,
		"{ "+m+";}",
		"{"+m+"; }",
		"(("+m+"))",
	)
}

// payload runs a command through eval or a shell.
func (g *diffGen) payload(depth int) string {
	m := g.cmd(depth - 1)
	if strings.Contains(m, "'") {
		m = g.marker()
	}
	return g.pick(
		"eval '"+m+"'",
		"eval \""+strings.ReplaceAll(m, `"`, `\"`)+"\"",
		"bash -c '"+m+"'",
		"sh -c '"+m+"'",
		"bash -c '"+m+"' x",
		"env bash -c '"+m+"'",
		"echo '"+m+"' | bash",
		"bash <<<'"+m+"'",
		"bash -c 'eval \\\""+m+"\\\"'",
		"x='"+m+"'; eval \"$x\"",
		"eval \\'; "+m,
		"eval echo \\; "+m,
		"eval 'echo a' \\; '"+m+"'",
		"xargs -I{} sh -c '{}' <<<'"+m+"'",
		"find . -maxdepth 0 -exec sh -c '"+m+"' \\;",
		"bash -s <<<'"+m+"'",
		"bash /dev/stdin <<<'"+m+"'",
	)
}

// textAsCode uses builtins and variables that run text as code.
func (g *diffGen) textAsCode() string {
	m := g.marker()
	return g.pick(
		"trap '"+m+"' EXIT",
		"trap '"+m+"' DEBUG; echo",
		"trap -- '"+m+"' EXIT",
		"PS4='$("+m+")'; set -x; echo",
		"PS4='`"+m+"`' && set -x && echo",
		"x='a[$("+m+")]'; echo $((x))",
		"x='a[$("+m+")]'; echo ${y:x}",
		"x='a[$("+m+")]'; [[ $x -eq 1 ]]",
		"x='a[$("+m+")]'; echo ${!x}",
		"x='$("+m+")'; echo ${x@P}",
		"[ -v 'a[$("+m+")]' ]",
		"test -v 'a[$("+m+")]'",
		"[[ -v a[$("+m+")] ]]",
		"printf -v 'a[$("+m+")]' x",
		"read 'a[$("+m+")]' <<<v",
		"declare -n r='a[$("+m+")]'; echo $r",
		"declare -i x; x='a[$("+m+")]'",
		"declare a[$("+m+")]",
		"local -n",
		"mapfile -C '"+m+" #' -c 1 <<<v",
		"BASH_ENV=<(echo '"+m+"') bash -c echo",
		"ENV=<(echo '"+m+"') sh -c echo",
		"hash -p \"$(command -v touch)\" ls; ls MARK_h",
		"shopt -s expand_aliases\nalias e='"+m+"'\ne",
		"alias e='"+m+"'",
		"PROMPT_COMMAND='"+m+"' bash -ic echo",
		"export -f",
		"unset 'a[$("+m+")]'",
		"let 'a[$("+m+")]'",
		"x='a[$("+m+")]'; echo $[x]",
		"x='a[$("+m+")]'; a=(1); echo ${a[x]}",
		"x='a[$("+m+")]'; (( x ))",
		"x='a[$("+m+")]'; for ((i=x; i<0; i++)); do :; done",
		"BASH_CMDS[ls]=\"$(command -v touch)\"; ls MARK_c",
		"complete -C '"+m+"' x",
		"enable -n echo; echo",
		"env 'BASH_FUNC_echo%%=() { "+m+"; }' bash -c echo",
		"GIT_PAGER='"+m+"' git log",
		"SHELLOPTS=xtrace PS4='$("+m+")' bash -c echo",
		"getopts a 'a[$("+m+")]'",
		"wait -p 'a[$("+m+")]' -n",
		"echo ${a['$("+m+")']}",
		"declare -A h; echo ${h[$("+m+")]}",
		"printf '%s' x | read -r 'a[$("+m+")]'",
	)
}

// arith uses arithmetic in its many forms.
func (g *diffGen) arith() string {
	m := g.marker()
	return g.pick(
		"(( $("+m+") ))",
		"(( a[$("+m+")] ))",
		"echo $(( 1 + $("+m+") ))",
		"let x=$("+m+")",
		"for ((i=$("+m+"); i<0; i++)); do :; done",
		"echo $((1)); "+m,
		"a[$("+m+")]=1",
		"a=([$("+m+")]=1)",
		"x+=$("+m+")",
		"echo $((x[$("+m+")]))",
		"((x=1)) && "+m,
		"echo $(( ($("+m+")) ))",
	)
}

// test uses [[ ]] and test with operands that may be evaluated.
func (g *diffGen) test(depth int) string {
	m := g.marker()
	return g.pick(
		"[[ $("+m+") ]]",
		"[[ x =~ $("+m+") ]]",
		"[[ x =~ (a|b) ]] && "+m,
		"[[ x =~ a]] ]] ; "+m,
		"[[ x == a ]] || echo; "+m,
		"[[ -f $("+m+") ]]",
		"[[ 1 -eq $("+m+") ]]",
		"[ x = x ] && "+m,
		"test -n x; "+m,
		"[[ x =~ ^[a-z]+$ ]]; "+m,
		"[[ a < b ]]; "+m,
		"[[ ( a ) ]] && "+g.cmd(depth-1),
		"[[ x =~ \\; ]]; "+m,
		"[[ x =~ '; "+m+"' ]]",
		"[[ x =~ \"; "+m+"\" ]]",
		"[[ x =~ ; ]] "+m,
	)
}

// odd uses syntax that parsers often disagree on.
func (g *diffGen) odd(depth int) string {
	m := g.marker()
	return g.pick(
		"echo {"+strings.ReplaceAll(m, " ", ",")+"}",
		"{"+strings.ReplaceAll(m, " ", ",")+"}",
		"echo @(a|b); "+m,
		"echo !(x); "+m,
		"echo +(a) "+m,
		"shopt -s extglob\necho @(a|"+m+")",
		"echo a#b; "+m,
		"echo a#"+m,
		"echo $#; "+m,
		"echo ${#}; "+m,
		"echo $'\\\n'; "+m,
		"echo \\#; "+m,
		"echo #\\\n"+m,
		"echo esac; "+m,
		"echo }; "+m,
		"echo ]]; "+m,
		"echo a;;"+m,
		"echo a &; "+m,
		"echo a >&2; "+m,
		"echo a >&MARK_x",
		"echo a 2>&1 >/dev/null; "+m,
		"echo $'a\\'b'; "+m,
		"echo $'\\'' ; "+m,
		"echo \"\\\"\"; "+m,
		"echo `#`; "+m,
		"echo `echo a # x` ; "+m,
		"echo $(echo a # x) ; "+m,
		"echo $(echo a # x)\n) ; "+m,
		"echo `# x`\n"+m,
		"echo ${x-`echo }`}; "+m,
		"time -p; "+m,
		"echo $((1 # x))\n"+m,
		"echo a \\\n# "+m,
		"echo $(( 1 \\\n + 1 )); "+m,
		"cat <<<'"+m+"'",
		"cat <<<$'"+m+"'",
		"echo a | while read x; do echo $x; done; "+m,
		"echo ${x:-a\\}b}; "+m,
		"echo $'\\e'; "+m,
		"x=1 "+m,
		"x='\n' echo; "+m,
		"declare -p x; "+m,
		"echo 'a'\\''b'; "+m,
		g.safe()+" #"+m,
		g.safe()+" \\#"+m,
	)
}

// line is one generated command line, sometimes mutated by inserting a
// risky token at a random place.
func (g *diffGen) line() string {
	l := g.cmd(3)
	if g.chance(0.3) {
		l = g.cmd(2) + g.sep() + l
	}
	for k := g.r.Intn(3); k > 0 && len(l) > 0 && g.chance(0.4); k-- {
		i := g.r.Intn(len(l) + 1)
		tok := g.pick("\\", "\\\n", "#", "'", `"`, "`", "$'", "\n", ")", "}", " ", ";", "EOF", "<<", "$(", "${",
			"\\\\", "((", "]]", "# x\\\n", "\t", "&")
		l = l[:i] + tok + l[i:]
	}
	return l
}
