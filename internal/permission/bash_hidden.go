package permission

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentloop/agentloop/internal/lazy"
)

// This file covers issue 8, class 5: commands that deny rules must see
// although they hide in the syntax tree, and constructs that run text as
// code, whose commands no rule can be matched against.
//
// Every command substitution anywhere in the tree is analysed: sweep walks
// the whole tree after the analyzer and analyses any substitution it did
// not reach. A construct that runs text as code (hidden code) is a
// problem, so it is never allowed by a pattern rule or the read-only
// defaults, and it is asked whenever any deny or ask rule applies to the
// tool, in every mode: the text may run any command, the denied ones too.
//
// Text runs as code through:
//   - arithmetic evaluation of a variable's value ($((x)), ((x)), let,
//     for ((…)), [[ x -eq y ]], ${a[x]}, ${s:x}, a[x]=…, declare -i): the
//     value may hold a[$(cmd)], and the subscript runs cmd;
//   - indirect expansion ${!x}, namerefs (declare -n) and prompt expansion
//     ${x@P}, for the same reason;
//   - test -v / [ -v ] / [[ -v ]] with a subscript, and builtins that
//     assign a variable named by a word (read, printf -v, mapfile, getopts,
//     wait -p, unset): the name may hold a subscript;
//   - trap, mapfile -C, complete/compgen -C and -F, bind -x, fc, alias and
//     shopt -s expand_aliases, enable, hash -p, export -f;
//   - variables whose values bash or common programs run: PS0–PS4 (with
//     set -x), PROMPT_COMMAND, BASH_ENV, ENV, SHELLOPTS, BASH_CMDS (the hash
//     table), BASH_ALIASES, BASH_FUNC_…, pagers, editors, askpass and ssh
//     commands, git's config environment, LD_PRELOAD and the like.

var codeVarsOnce lazy.Value[map[string]bool] // the value of codeVars, built at its first use

// codeVars returns variables whose values are run as code or that load code,
// by bash or by programs commonly run from it.
func codeVars() map[string]bool { return codeVarsOnce.Get(newCodeVars) }

func newCodeVars() map[string]bool {
	return map[string]bool{
		"PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true, "PROMPT_COMMAND": true, "BASH_ENV": true,
		"ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "BASH_CMDS": true, "BASH_ALIASES": true, "BASH_LOADABLES_PATH": true,
		"BASH_XTRACEFD": true, "FUNCNEST": true, "IFS": true, "PATH": true, "CDPATH": true, "GLOBIGNORE": true, "EXECIGNORE": true,
		"PAGER": true, "GIT_PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "EDITOR": true, "VISUAL": true,
		"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "FCEDIT": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "GIT_EXEC_PATH": true,
		"GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
		"GIT_DIR": true, "GIT_TEMPLATE_DIR": true, "LESSOPEN": true, "LESSCLOSE": true, "BROWSER": true, "SHELL": true,
		"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "NODE_OPTIONS": true, "PERL5OPT": true,
		"PERL5LIB": true, "RUBYOPT": true, "PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true,
		"FZF_DEFAULT_COMMAND": true, "TAR_OPTIONS": true, "MAKEFLAGS": true, "GREP_OPTIONS": true,
	}
}

// isCodeVar reports whether assigning name may make text run as code.
func isCodeVar(name string) bool {
	return codeVars()[name] || strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") ||
		strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// plainName reports whether s is a variable name without a subscript.
func plainName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// hide records a construct that runs text as code.
func (a *analyzer) hide(why string) {
	a.problem(why)
	if a.hidden == "" {
		a.hidden = why
	}
}

// numberWord reports whether an arithmetic operand is a number literal or
// one of the special parameters that always expand to a number.
func numberWord(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		v := p.Value
		if v == "" || v[0] < '0' || v[0] > '9' {
			return false
		}
		for _, c := range v {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '#' || c == '@' || c == '_') {
				return false
			}
		}
		return true
	case *syntax.ParamExp:
		return p.Short && p.Param != nil && (p.Param.Value == "#" || p.Param.Value == "?" || p.Param.Value == "$" ||
			p.Param.Value == "!")
	}
	return false
}

// arithmOnlyNumbers reports whether an arithmetic expression evaluates no
// text but number literals: no variables, no expansions.
func arithmOnlyNumbers(x syntax.ArithmExpr) bool {
	if x == nil {
		return true
	}
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, isWord := n.(*syntax.Word); isWord {
			if !numberWord(w) {
				ok = false
			}
			return false
		}
		return ok
	})
	return ok
}

// sweep walks the whole tree after the analyzer: it analyses the
// substitutions the analyzer did not reach, and finds the syntax that runs
// text as code wherever it stands.
func (a *analyzer) sweep(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			if !a.seen[n] {
				a.seen[n] = true
				a.problem("a command substitution the analysis could not place")
				a.nestedStmts(n.Stmts)
			}
		case *syntax.ProcSubst:
			if !a.seen[n] {
				a.seen[n] = true
				a.problem("a process substitution the analysis could not place")
				a.nestedStmts(n.Stmts)
			}
		case *syntax.ArithmExp:
			if !arithmOnlyNumbers(n.X) {
				a.hide("arithmetic on a value that may hold a subscript with a command")
			}
		case *syntax.ArithmCmd:
			if !arithmOnlyNumbers(n.X) {
				a.hide("arithmetic on a value that may hold a subscript with a command")
			}
		case *syntax.LetClause:
			a.hide("let evaluates text as arithmetic")
		case *syntax.CStyleLoop:
			if !arithmOnlyNumbers(n.Init) || !arithmOnlyNumbers(n.Cond) || !arithmOnlyNumbers(n.Post) {
				a.hide("arithmetic on a value that may hold a subscript with a command")
			}
		case *syntax.ParamExp:
			a.sweepParam(n)
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				x, _ := n.X.(*syntax.Word)
				y, _ := n.Y.(*syntax.Word)
				if x == nil || y == nil || !numberWord(x) || !numberWord(y) {
					a.hide("an arithmetic comparison of a value that may hold a subscript with a command")
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				if w, ok := n.X.(*syntax.Word); !ok || !plainName(wordText(w)) {
					a.hide("[[ -v ]] with a subscript")
				}
			}
		case *syntax.WordIter:
			if n.Name != nil && isCodeVar(n.Name.Value) {
				a.hide("a loop that assigns " + n.Name.Value)
			}
		case *syntax.Assign:
			a.sweepAssign(n)
		case *syntax.CallExpr:
			a.sweepEnvWords(n)
		case *syntax.DeclClause:
			a.sweepDecl(n)
		}
		return true
	})
}

// sweepEnvWords finds NAME=value words of code variables given to a
// command that passes them to the program it runs (env, sudo, …), also
// when the value is only known when it runs (env BASH_FUNC_f%%="$x" …).
func (a *analyzer) sweepEnvWords(c *syntax.CallExpr) {
	if len(c.Args) < 2 {
		return
	}
	head := wordText(c.Args[0])
	if !runsOthers()[filepath.Base(head)] {
		return
	}
	for _, w := range c.Args[1:] {
		t := leadingText(w)
		if i := strings.IndexByte(t, '='); i > 0 && isCodeVar(strings.TrimSuffix(t[:i], "%%")) {
			a.hide("an assignment of " + t[:i])
		}
	}
}

// leadingText returns the literal text at the start of a word, quotes
// removed, up to the first expansion.
func leadingText(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(l.Value)
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// wordText returns the text of a word made of one literal, or "".
func wordText(w *syntax.Word) string {
	if w == nil || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok {
		return l.Value
	}
	return ""
}

func (a *analyzer) sweepParam(p *syntax.ParamExp) {
	if p.Index != nil {
		w, ok := p.Index.(*syntax.Word)
		if !ok || !simpleIndex(w) {
			a.hide("a subscript that is evaluated when the command runs")
		}
	}
	if p.Slice != nil && (!arithmOnlyNumbers(p.Slice.Offset) || !arithmOnlyNumbers(p.Slice.Length)) {
		a.hide("a slice that is evaluated when the command runs")
	}
	if p.Excl && p.Names == 0 && !(p.Index != nil && simpleIndexAll(p.Index)) {
		a.hide("an indirect expansion")
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.OtherParamOps:
			switch wordText(p.Exp.Word) {
			case "Q", "U", "u", "L", "a", "A", "K", "k", "E":
			default:
				a.hide("a prompt expansion")
			}
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if p.Param != nil && isCodeVar(p.Param.Value) {
				a.hide("an assignment of " + p.Param.Value)
			}
		}
	}
}

// simpleIndexAll reports an [@] or [*] subscript.
func simpleIndexAll(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	t := wordText(w)
	return ok && (t == "@" || t == "*")
}

func (a *analyzer) sweepAssign(as *syntax.Assign) {
	if as.Name != nil && isCodeVar(as.Name.Value) {
		a.hide("an assignment of " + as.Name.Value)
	}
	if as.Index != nil && !arithmOnlyNumbers(as.Index) {
		a.hide("a subscript that is evaluated when the command runs")
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Index != nil && !arithmOnlyNumbers(el.Index) {
				a.hide("a subscript that is evaluated when the command runs")
			}
		}
	}
	if as.Name == nil && as.Naked && as.Value != nil {
		// a name given as a word (declare "$x"): it may hold anything
		if t := wordText(as.Value); !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") && !plainName(t) {
			a.hide("a variable named by a word that is only known when it runs")
		}
	}
}

// sweepDecl checks declare, typeset, local, export and readonly: namerefs
// (-n), integer variables (-i, whose assignments evaluate arithmetic) and
// exported functions (-f).
func (a *analyzer) sweepDecl(d *syntax.DeclClause) {
	name := declName(d)
	for _, as := range d.Args {
		if !as.Naked || as.Name != nil || as.Value == nil {
			continue
		}
		t := wordText(as.Value)
		if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
			continue
		}
		if strings.ContainsAny(t[1:], "ni") || name == "export" && strings.Contains(t[1:], "f") {
			a.hide(name + " " + t + " makes later assignments or expansions run text")
		}
	}
	if name == "nameref" {
		a.hide("a nameref")
	}
}

// hiddenBuiltin checks the builtins and commands that run text as code,
// given the command's allow form (wrappers stripped) and its words.
func (a *analyzer) hiddenBuiltin(cmd *bashCmd, eff []shWord) {
	for _, as := range cmd.assigns {
		if isCodeVar(as.name) {
			a.hide("an assignment of " + as.name)
		}
	}
	head, ok := cmd.args[0].lit()
	if ok && runsOthers()[filepath.Base(head)] {
		// env NAME=value …, sudo NAME=value …: the same variables.
		for _, w := range cmd.args[1:] {
			t, isLit := w.lit()
			if !isLit {
				continue
			}
			if i := strings.IndexByte(t, '='); i > 0 && isCodeVar(strings.TrimSuffix(t[:i], "%%")) {
				a.hide("an assignment of " + t[:i])
			}
		}
	}
	name, ok := eff[0].lit()
	if !ok {
		return
	}
	args := eff[1:]
	litArgs := func() ([]string, bool) {
		var out []string
		for _, w := range args {
			t, isLit := w.lit()
			if !isLit {
				return out, false
			}
			out = append(out, t)
		}
		return out, true
	}
	words, known := litArgs()
	hasOpt := func(letters string) bool {
		for _, t := range words {
			if t == "--" {
				return false
			}
			if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t[1:], letters) {
				return true
			}
		}
		return !known
	}
	switch filepath.Base(name) {
	case "trap":
		if known && len(words) > 0 && words[0] == "--" {
			words = words[1:]
		}
		// trap, trap -l, trap -p: listings; trap '' SIG and trap - SIG:
		// ignore or reset a signal.
		if known && (len(words) == 0 || words[0] == "-l" || words[0] == "-p" || words[0] == "" || words[0] == "-") {
			return
		}
		a.hide("trap runs text as code")
		if known {
			a.nest(words[0]) // so that deny rules see what it runs
		}
	case "set":
		// -k passes every NAME=value word to the command's environment
		// (BASH_ENV=… after the command name), -T and functrace let traps
		// run in functions. The words after the options are positional
		// parameters.
	options:
		for i, w := range args {
			t, isLit := w.lit()
			switch {
			case !isLit && w.mayBeFlag():
				a.hide("set with options only known when it runs")
				break options
			case !isLit, t == "--", t == "-", !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+"):
				break options
			}
			next := ""
			if i+1 < len(args) {
				next, _ = args[i+1].lit()
			}
			if strings.ContainsAny(t[1:], "kT") || strings.Contains(t[1:], "o") &&
				(next == "keyword" || next == "functrace" || next == "posix" || next == "") {
				a.hide("set " + t + " changes how text runs")
			}
		}
	case "alias", "enable", "fc", "bind":
		a.hide(name + " runs text as code")
	case "shopt":
		for _, t := range words {
			switch t {
			case "-s", "-u", "-q", "-p", "-o", "nullglob", "dotglob", "globstar", "failglob", "nocaseglob",
				"nocasematch", "extglob", "pipefail", "errexit", "nounset", "xtrace":
			default:
				a.hide("shopt " + t + " changes how text runs")
				return
			}
		}
		if !known {
			a.hide("shopt with options only known when it runs")
		}
	case "hash":
		if hasOpt("p") {
			a.hide("hash -p makes a name run another program")
		}
	case "complete", "compgen":
		if hasOpt("CF") {
			a.hide(name + " -C/-F runs text as code")
		}
	case "mapfile", "readarray":
		if hasOpt("C") {
			a.hide(name + " -C runs text as code")
		}
		a.namedVars(args, "dnOstuCc", "")
	case "read":
		a.namedVars(args, "dinNptu", "a")
	case "printf":
		if len(words) > 1 && strings.HasPrefix(words[0], "-v") {
			v := strings.TrimPrefix(words[0], "-v")
			if v == "" {
				v = words[1]
			}
			if !plainName(v) || isCodeVar(v) {
				a.hide("printf -v into " + v)
			}
		} else if !known && len(args) > 0 && args[0].mayBeFlag() {
			a.hide("printf with options only known when it runs")
		}
	case "getopts":
		if len(args) > 1 {
			if t, isLit := args[1].lit(); !isLit || !plainName(t) || isCodeVar(t) {
				a.hide("getopts into a variable that may hold a subscript")
			}
		}
	case "wait":
		for i, t := range words {
			if t == "-p" && i+1 < len(words) && (!plainName(words[i+1]) || isCodeVar(words[i+1])) {
				a.hide("wait -p into a variable that may hold a subscript")
			}
		}
		if !known {
			a.hide("wait with words only known when it runs")
		}
	case "unset":
		for _, t := range words {
			if strings.Contains(t, "[") {
				a.hide("unset of an element evaluates its subscript")
			}
		}
		if !known {
			a.hide("unset of names only known when they run")
		}
	case "test", "[":
		for i, t := range words {
			if (t == "-v" || t == "-R") && (i+1 >= len(words) || !plainName(words[i+1])) {
				a.hide("test -v with a subscript")
			}
		}
		if !known {
			for _, w := range args {
				if w.mayBeFlag() {
					a.hide("test with operators only known when it runs")
					break
				}
			}
		}
	case "export", "declare", "typeset", "local", "readonly":
		// Only reached when the parser did not make a DeclClause of it
		// (behind a wrapper: command export …).
		a.hide(name + " behind a wrapper")
	}
}

// namedVars checks the variable names a builtin assigns (read, mapfile):
// its operands, and the values of the options in nameOpts; the options in
// withValue take a value that is not a name.
func (a *analyzer) namedVars(args []shWord, withValue, nameOpts string) {
	check := func(n string) {
		if !plainName(n) || isCodeVar(n) {
			a.hide("a variable name that may hold a subscript")
		}
	}
	for i := 0; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			a.hide("a variable name only known when it runs")
			return
		}
		if t == "--" {
			for _, w := range args[i+1:] {
				n, isLit := w.lit()
				if !isLit {
					a.hide("a variable name only known when it runs")
					return
				}
				check(n)
			}
			return
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			check(t)
			continue
		}
		for j := 1; j < len(t); j++ {
			c := t[j]
			if strings.IndexByte(withValue, c) < 0 && strings.IndexByte(nameOpts, c) < 0 {
				continue
			}
			val := t[j+1:]
			if val == "" && i+1 < len(args) {
				i++
				if val, ok = args[i].lit(); !ok {
					a.hide("a variable name only known when it runs")
					return
				}
			}
			if strings.IndexByte(nameOpts, c) >= 0 {
				check(val)
			}
			break
		}
	}
}

// markSeen records a substitution the analyzer reached.
func (a *analyzer) markSeen(n syntax.Node) {
	if a.seen == nil {
		a.seen = map[syntax.Node]bool{}
	}
	a.seen[n] = true
}

// hiddenCodeRule returns a deny or ask rule that text run as code could
// evade: any Bash command pattern, or any path rule the shell's reads and
// writes are checked against. Deny rules come first.
func (st *state) hiddenCodeRule(tool string) *rule {
	for _, b := range []Behavior{Deny, Ask} {
		for _, r := range st.compiled {
			if r.Behavior == b && r.kind == kindBash && r.appliesTo(tool) {
				return r
			}
		}
		for _, write := range []bool{false, true} {
			if rs := st.pathRulesFor(b, write, tool); len(rs) > 0 {
				return rs[0]
			}
		}
	}
	return nil
}

func msgHiddenCode(tool, what, why string, r *rule) string {
	return fmt.Sprintf("Using %s on %s needs approval: it runs text as code (%s), which no rule can be checked against, and the %s rule %s exists.",
		tool, what, why, strings.ToLower(string(r.Behavior)), r)
}
