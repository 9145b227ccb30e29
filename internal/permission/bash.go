package permission

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentloop/agentloop/internal/lazy"
)

// Limits of the shell analysis.
const (
	maxCommandLen = 64 << 10 // longer commands are not analysed
	maxNesting    = 6        // eval / bash -c payloads analysed inside one another
	maxCwds       = 16       // possible working directories tracked through cd
)

// bashCmd is one simple command of a shell command line.
type bashCmd struct {
	assigns []shAssign // leading NAME=value words
	args    []shWord   // the words of the command, name first
	cwds    []string   // working directories it may run in; nil if unknown
	inLoop  bool       // inside a loop body or condition
	src     string     // the command's text, for messages
	// transparent commands (eval, bash -c) whose payload was analysed
	// into commands of their own: they need no approval themselves.
	transparent bool
	// async: it runs alongside other commands of the line (in a pipeline,
	// in the background, in a process substitution).
	async bool
}

type shAssign struct {
	name  string
	value shWord
}

// bashRedir is a redirection to or from a file.
type bashRedir struct {
	write  bool
	target shWord
	owner  int // index of the simple command it belongs to, -1 for a compound command
	cwds   []string
	inLoop bool
}

// bashAnalysis is what the parser could establish about a command line.
type bashAnalysis struct {
	cmds     []*bashCmd
	redirs   []*bashRedir
	problems []string // reasons the command cannot be proven safe
	// unparsed is set when some command text could not be analysed at all
	// (a parse error, a payload known only when it runs, a construct bash
	// may read differently from the parser), so that deny rules could not
	// be checked against it.
	unparsed bool
	// hidden says why some text runs as code that no rule can be matched
	// against (trap, PS4, arithmetic on values, …; see bash_hidden.go).
	hidden string
}

// analyzer walks the syntax tree of a command line.
type analyzer struct {
	bashAnalysis
	home      string
	cdpath    bool
	cwds      []string // nil when unknown
	depth     int
	loopDepth int
	async     int // depth of pipelines, background lists and process substitutions
	loopStart int // index in cmds where the outermost loop began
	loopRedir int
	pattern   bool   // analysing the text of a rule, not a command
	text      string // the text being parsed
	// seen holds the substitutions analysed, so that sweep finds the
	// ones the walk missed.
	seen map[syntax.Node]bool
}

// analyzeBash parses a command line and lists its simple commands and
// redirections. cwd is the directory the command starts in.
func analyzeBash(command, cwd, home string) *bashAnalysis {
	a := &analyzer{home: home, cdpath: os.Getenv("CDPATH") != ""}
	a.cwds = cwdForms(cwd)
	a.parse(command)
	return &a.bashAnalysis
}

// splitsToken reports whether a line continuation (backslash, newline) in
// command sits against an operator or expansion character on either side
// with no space before it, where it may split a token bash would join
// ("$\⏎(", "(\⏎(", "$\⏎'", "<\⏎(", "&\⏎&"). A continuation after a
// space, or inside a word of letters, is the common, harmless kind.
func splitsToken(command string) bool {
	const ops = "$()<>&|;{}[]'\"`=!"
	for i := strings.Index(command, "\\\n"); i >= 0; {
		j := i + 2
		for strings.HasPrefix(command[j:], "\\\n") {
			j += 2
		}
		k := i
		for k >= 2 && command[k-2:k] == "\\\n" {
			k -= 2
		}
		if k > 0 {
			prev := command[k-1]
			if prev != ' ' && prev != '\t' && prev != '\n' &&
				(strings.IndexByte(ops, prev) >= 0 || j < len(command) && strings.IndexByte(ops, command[j]) >= 0) {
				return true
			}
		}
		n := strings.Index(command[j:], "\\\n")
		if n < 0 {
			break
		}
		i = j + n
	}
	return false
}

func cwdForms(cwd string) []string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil
	}
	c := filepath.Clean(cwd)
	return addUnique(nil, c, resolvePhysical(c))
}

func addUnique(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			if l == it {
				found = true
				break
			}
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}

func (a *analyzer) problem(why string) {
	for _, p := range a.problems {
		if p == why {
			return
		}
	}
	a.problems = append(a.problems, why)
}

// parse analyses one command text (the command line, or a payload of
// eval or bash -c).
func (a *analyzer) parse(command string) {
	switch {
	case len(command) > maxCommandLen:
		a.problem("command too long to analyse")
		a.unparsed = true
		return
	case !utf8.ValidString(command):
		a.problem("command is not valid UTF-8")
		a.unparsed = true
		return
	case strings.ContainsAny(command, "\x00\r"):
		a.problem("command contains a NUL or carriage return")
		a.unparsed = true
		return
	case hasInvisible(command):
		a.problem("command contains invisible or unusual space characters")
		a.unparsed = true
		return
	case strings.TrimSpace(command) == "":
		a.problem("empty command")
		return
	case splitsToken(command):
		// bash removes a line continuation before it reads tokens; the
		// parser, in some of its modes, keeps it: "$\⏎'…'", "(\⏎(",
		// "$\⏎(" read differently by the two.
		a.problem("line continuation inside an operator or expansion")
		a.unparsed = true
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	prev := a.text
	a.text = command
	defer func() { a.text = prev }()
	if err != nil {
		a.problem("the command could not be parsed: " + err.Error())
		a.unparsed = true
		return
	}
	if a.pattern {
		a.stmts(f.Stmts)
		return
	}
	if why := disagreements(command, f); why != "" {
		// The commands the parser found are still analysed, so that deny
		// rules see them; the text as a whole cannot be proven.
		a.problem(why)
		a.unparsed = true
	}
	if a.seen == nil {
		a.seen = map[syntax.Node]bool{}
	}
	a.stmts(f.Stmts)
	a.sweep(f)
}

func (a *analyzer) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		a.stmt(s)
	}
}

// hasInvisible reports format characters (zero-width, bidirectional
// controls) and non-ASCII spaces: the shell treats them as ordinary
// characters, but a person reading the command does not see them.
func hasInvisible(s string) bool {
	for _, r := range s {
		if r > 127 && (unicode.Is(unicode.Cf, r) || unicode.IsSpace(r)) {
			return true
		}
	}
	return false
}

// nestedStmts analyses the commands of a substitution.
func (a *analyzer) nestedStmts(list []*syntax.Stmt) {
	a.stmts(list)
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Background {
		a.async++
		defer func() { a.async-- }()
	}
	if s.Coprocess || s.Disown {
		a.problem("coprocess")
	}
	var own []*bashRedir
	for _, r := range s.Redirs {
		if br := a.redirect(r); br != nil {
			own = append(own, br)
		}
	}
	owner := a.command(s.Cmd)
	for _, br := range own {
		br.owner = owner
	}
}

// command analyses a command and returns the index of its simple command,
// or -1 for compound commands.
func (a *analyzer) command(c syntax.Command) int {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		return a.call(c)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.async++
			defer func() { a.async-- }()
		}
		a.stmt(c.X)
		a.stmt(c.Y)
	case *syntax.Subshell:
		a.stmts(c.Stmts)
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond)
			a.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		a.loop(func() {
			a.stmts(c.Cond)
			a.stmts(c.Do)
		})
	case *syntax.ForClause:
		if c.Select {
			a.problem("select loop")
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			if !harmlessVar(l.Name.Value) {
				a.problem("loop variable " + l.Name.Value + " may change how commands run")
			}
			for _, w := range l.Items {
				a.word(w)
			}
		default:
			a.problem("arithmetic for loop")
			syntax.Walk(c.Loop, func(n syntax.Node) bool {
				if w, ok := n.(*syntax.Word); ok {
					a.word(w)
					return false
				}
				return true
			})
		}
		a.loop(func() { a.stmts(c.Do) })
	case *syntax.CaseClause:
		a.word(c.Word)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.word(p)
			}
			a.stmts(it.Stmts)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			if call, ok := leftmostCommand(c.Stmt).(*syntax.CallExpr); ok && len(call.Args) > 0 && strings.HasPrefix(wordText(call.Args[0]), "-") {
				// bash 5.2 reads "time -p -- cmd" and "time -- cmd" as cmd;
				// the parser takes "--" for the command's name. time
				// covers a whole pipeline or list, so the word to look at
				// is the first of its first command ("time -- a | b").
				a.problem("time with an option the parser does not know")
				a.unparsed = true
			}
		}
		a.stmt(c.Stmt)
	case *syntax.TestClause:
		a.test(c.X)
	case *syntax.FuncDecl:
		a.problem("function definition")
		a.stmt(c.Body)
	case *syntax.ArithmCmd:
		a.problem("arithmetic command")
		a.arithm(c.X)
	case *syntax.DeclClause:
		a.problem(declName(c) + " changes shell variables")
		for _, as := range c.Args {
			a.assignWords(as)
		}
	case *syntax.LetClause:
		a.problem("let evaluates arithmetic")
		for _, x := range c.Exprs {
			a.arithm(x)
		}
	case *syntax.CoprocClause:
		a.problem("coprocess")
		a.stmt(c.Stmt)
	default:
		a.problem("unusual shell construct")
	}
	return -1
}

// leftmostCommand returns the command that runs first in st: through
// pipes and && / || lists, the leftmost one.
func leftmostCommand(st *syntax.Stmt) syntax.Command {
	cmd := st.Cmd
	for {
		b, ok := cmd.(*syntax.BinaryCmd)
		if !ok || b.X == nil {
			return cmd
		}
		cmd = b.X.Cmd
	}
}

func declName(c *syntax.DeclClause) string {
	if c.Variant != nil {
		return c.Variant.Value
	}
	return "declare"
}

func (a *analyzer) assignWords(as *syntax.Assign) {
	if as.Index != nil {
		a.arithm(as.Index)
	}
	a.word(as.Value)
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Index != nil {
				a.arithm(el.Index)
			}
			a.word(el.Value)
		}
	}
}

// loop analyses a loop body. A cd inside a loop can move the working
// directory any number of times, so it makes every directory in the loop
// unknown (see cd).
func (a *analyzer) loop(body func()) {
	if a.loopDepth == 0 {
		a.loopStart, a.loopRedir = len(a.cmds), len(a.redirs)
	}
	a.loopDepth++
	body()
	a.loopDepth--
}

// test checks a [[ … ]] expression: arithmetic comparisons and -v/-R
// evaluate their operands as arithmetic or subscripts, which can run
// commands.
func (a *analyzer) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		a.word(x)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			a.problem("arithmetic comparison in [[ ]]")
		case syntax.TsReMatch:
			// The parser reads a =~ pattern in a mode of its own, where
			// a line continuation stays in the text; bash joins the
			// lines first, so "$\⏎(cmd)" is a command substitution to
			// bash and a literal to the parser.
			if s, e := int(x.Y.Pos().Offset()), int(x.Y.End().Offset()); s >= 0 && s <= e && e <= len(a.text) &&
				strings.Contains(a.text[s:e], "\\\n") {
				a.problem("line continuation in a [[ =~ ]] pattern")
				a.unparsed = true
			}
		}
		a.test(x.X)
		a.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			a.problem("[[ -v ]] evaluates a subscript")
		}
		a.test(x.X)
	case *syntax.ParenTest:
		a.test(x.X)
	}
}

// redirect records a redirection to or from a file.
func (a *analyzer) redirect(r *syntax.Redirect) *bashRedir {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		a.problem("redirection that assigns a variable")
	}
	br := &bashRedir{owner: -1, cwds: a.cwds, inLoop: a.loopDepth > 0}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
		syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		br.write = true
		br.target = a.word(r.Word)
	case syntax.RdrIn:
		br.target = a.word(r.Word)
	case syntax.DplIn, syntax.DplOut:
		w := a.word(r.Word)
		if t, ok := w.lit(); ok && isFDWord(t) {
			return nil
		}
		if r.Op == syntax.DplIn {
			a.problem("unusual input duplication")
			return nil
		}
		br.write = true // >&file writes both outputs to the file
		br.target = w
	case syntax.Hdoc, syntax.DashHdoc:
		a.word(r.Word)
		a.word(r.Hdoc)
		return nil
	case syntax.WordHdoc:
		a.word(r.Word)
		return nil
	default:
		a.problem("unusual redirection")
		return nil
	}
	a.redirs = append(a.redirs, br)
	return br
}

// isFDWord reports whether the word of a >& or <& names a descriptor.
func isFDWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // "-" closes the descriptor
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// call records a simple command.
func (a *analyzer) call(c *syntax.CallExpr) int {
	cmd := &bashCmd{}
	for _, as := range c.Assigns {
		if as.Append || as.Naked || as.Index != nil || as.Array != nil || as.Name == nil {
			a.problem("array or appending assignment")
			a.assignWords(as)
			continue
		}
		cmd.assigns = append(cmd.assigns, shAssign{name: as.Name.Value, value: a.word(as.Value)})
	}
	for _, w := range c.Args {
		cmd.args = append(cmd.args, a.word(w))
	}
	cmd.cwds = a.cwds
	cmd.inLoop = a.loopDepth > 0
	cmd.async = a.async > 0
	if s, e := int(c.Pos().Offset()), int(c.End().Offset()); s >= 0 && s <= e && e <= len(a.text) {
		cmd.src = a.text[s:e]
	}
	idx := len(a.cmds)
	a.cmds = append(a.cmds, cmd)
	if len(cmd.args) > 0 && !a.pattern {
		if k := cmd.args[0].kind; k == wordUnknown || k == wordGlob {
			a.problem("the command name is only known when it runs")
		}
		a.special(cmd)
	}
	return idx
}

// special handles the commands that change how the rest runs: cd and its
// kin, eval and shells with -c, and builtins that change shell state.
func (a *analyzer) special(cmd *bashCmd) {
	eff, _ := allowForm(cmd.args)
	if len(eff) == 0 {
		return
	}
	a.hiddenBuiltin(cmd, eff)
	// Payloads run through other wrappers (sudo sh -c …, find -exec sh -c
	// …, xargs sh -c …) are analysed too, so that deny rules see them.
	done := map[string]bool{}
	if p, ok := payloadOf(eff); ok {
		done[p] = true // analysed below
	}
	for _, f := range denyForms(cmd.args)[1:] {
		if p, ok := payloadOf(f); ok && !done[p] {
			done[p] = true
			a.nest(p)
		}
	}
	// A command that runs others may take a whole command line in one
	// word (env -S, su -c, watch, flock -c, …): analyse such words too.
	if head, ok := cmd.args[0].lit(); ok && runsOthers()[filepath.Base(head)] {
		for _, w := range cmd.args[1:] {
			if t, ok := w.lit(); ok && strings.ContainsAny(t, " \t\n;&|") && !done[t] {
				done[t] = true
				a.nest(t)
			}
		}
	}
	name, ok := eff[0].lit()
	if !ok {
		return
	}
	// Assignments in front of eval or a shell reach the commands it runs
	// (BASH_ENV=… bash -c runs a file first): only harmless ones keep the
	// command transparent.
	safeEnv := true
	for _, as := range cmd.assigns {
		safeEnv = safeEnv && safeAssign(as)
	}
	switch name {
	case "cd":
		a.cd(eff[1:])
	case "pushd", "popd":
		a.unknownCwd()
	case "eval":
		var parts []string
		for _, w := range eff[1:] {
			t, ok := w.lit()
			if !ok {
				a.problem("eval of text that is only known when it runs")
				a.unparsed = true
				return
			}
			parts = append(parts, t)
		}
		if a.nest(strings.Join(parts, " ")) && safeEnv {
			cmd.transparent = true
		}
	case "bash", "sh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/dash", "/usr/bin/sh", "/usr/bin/dash":
		if payload, ok := shellPayload(eff[1:]); ok {
			if t, isLit := payload.lit(); isLit {
				if a.nest(t) && safeEnv {
					cmd.transparent = true
				}
			} else {
				a.problem("shell -c with a command that is only known when it runs")
				a.unparsed = true
			}
		}
	case "read":
		if !readHarmless(eff[1:]) {
			a.problem("read into variables that may change how commands run")
		}
	case "alias", "unalias", "shopt", "enable", "hash", "trap", "unset", "mapfile", "readarray",
		"getopts", "source", ".", "exec", "builtin", "command", "declare", "typeset", "export",
		"readonly", "local", "let", "set", "function", "compgen", "complete", "bind", "fc", "history":
		if name == "set" && setHarmless(eff[1:]) {
			return
		}
		if name == "exec" && len(eff) == 1 {
			return // exec with only redirections: they are checked as such
		}
		if name == "command" && len(eff) > 1 && (eff[1].is("-v") || eff[1].is("-V")) {
			return
		}
		a.problem(name + " changes the state of the shell")
	}
}

// nest analyses the payload of eval or sh -c.
func (a *analyzer) nest(payload string) bool {
	if a.depth >= maxNesting {
		a.problem("commands nested too deep")
		return false
	}
	a.depth++
	a.parse(payload)
	a.depth--
	return true
}

// payloadOf returns the literal command text that a form runs through
// eval or a shell's -c, if it is one.
func payloadOf(form []shWord) (string, bool) {
	if len(form) == 0 {
		return "", false
	}
	name, _ := form[0].lit()
	switch filepath.Base(name) {
	case "eval":
		var parts []string
		for _, w := range form[1:] {
			t, ok := w.lit()
			if !ok {
				return "", false
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, " "), true
	case "bash", "sh", "dash":
		if p, ok := shellPayload(form[1:]); ok {
			return p.lit()
		}
	}
	return "", false
}

// shellPayload finds the command string of `bash [-eux…] -c 'payload' …`.
// It reports false when the options are not ones it knows.
func shellPayload(args []shWord) (shWord, bool) {
	for i := 0; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			return shWord{}, false
		}
		if t == "-o" && i+1 < len(args) {
			v, _ := args[i+1].lit()
			if v != "pipefail" && v != "errexit" && v != "nounset" && v != "xtrace" {
				return shWord{}, false
			}
			i++
			continue
		}
		if len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return shWord{}, false
		}
		hasC := false
		for _, c := range t[1:] {
			switch c {
			case 'c':
				hasC = true
			case 'e', 'u', 'x', 'v':
			default:
				return shWord{}, false
			}
		}
		if hasC {
			if t[0] != '-' || i+1 >= len(args) {
				return shWord{}, false
			}
			return args[i+1], true
		}
	}
	return shWord{}, false
}

// cd follows a change of directory: the set of directories later commands
// may run in grows by the target (the cd may fail, and subshells undo it,
// so the old ones stay possible).
func (a *analyzer) cd(args []shWord) {
	for len(args) > 0 {
		t, ok := args[0].lit()
		if !ok || t == "--" {
			if ok {
				args = args[1:]
			}
			break
		}
		if t == "-L" || t == "-P" || t == "-e" || t == "-@" {
			args = args[1:]
			continue
		}
		break
	}
	if a.loopDepth > 0 || a.cwds == nil || len(args) > 1 {
		a.unknownCwd()
		return
	}
	var targets []string
	switch {
	case len(args) == 0:
		if a.home == "" {
			a.unknownCwd()
			return
		}
		targets = []string{a.home}
	case args[0].kind == wordTilde && a.home != "":
		targets = []string{a.home + args[0].text}
	case args[0].kind == wordLiteral && args[0].text != "" && args[0].text != "-":
		t := args[0].text
		if filepath.IsAbs(t) {
			targets = []string{t}
			break
		}
		if a.cdpath && !(t == "." || t == ".." || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../")) {
			a.unknownCwd() // CDPATH may send it elsewhere
			return
		}
		for _, c := range a.cwds {
			targets = append(targets, c+"/"+t)
		}
	default:
		a.unknownCwd()
		return
	}
	next := append([]string(nil), a.cwds...)
	for _, t := range targets {
		next = addUnique(next, filepath.Clean(t), resolvePhysical(filepath.Clean(t)), resolvePhysical(t))
	}
	if len(next) > maxCwds {
		a.unknownCwd()
		return
	}
	a.cwds = next
}

// unknownCwd gives up on knowing the working directory. Inside a loop the
// commands already seen in it may run after the change too.
func (a *analyzer) unknownCwd() {
	a.cwds = nil
	if a.loopDepth > 0 {
		for _, c := range a.cmds[a.loopStart:] {
			c.cwds = nil
		}
		for _, r := range a.redirs[a.loopRedir:] {
			r.cwds = nil
		}
	}
}

// harmlessVar reports whether assigning the shell variable name cannot
// change how later commands are found or run: lower-case names, which
// neither bash nor common programs read from the environment, except the
// proxy settings and zsh's tied arrays.
func harmlessVar(name string) bool {
	if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] == '_') {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	switch name {
	case "http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy", "path", "cdpath", "fpath",
		"manpath", "module_path", "mailpath", "histchars", "auto_resume", "_":
		return false
	}
	return true
}

var safeEnvVarsOnce lazy.Value[map[string]bool] // the value of safeEnvVars, built at its first use

// safeEnvVars may be set in front of a command (NAME=value cmd) without
// changing what an allow rule for cmd means: the reference strips such
// assignments of known-safe variables before matching.
func safeEnvVars() map[string]bool { return safeEnvVarsOnce.Get(newSafeEnvVars) }

func newSafeEnvVars() map[string]bool {
	return map[string]bool{
		"LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true, "LC_MESSAGES": true, "LC_COLLATE": true,
		"LC_NUMERIC": true, "LC_TIME": true, "TZ": true, "NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true,
		"CI": true, "TERM": true, "COLUMNS": true, "LINES": true, "NODE_ENV": true, "RUST_LOG": true,
		"RUST_BACKTRACE": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
		"PYTHONIOENCODING": true, "GOOS": true, "GOARCH": true, "CGO_ENABLED": true, "GO111MODULE": true,
		"DEBUG": true, "VERBOSE": true,
	}
}

// safeAssign reports whether a leading NAME=value of a command is one the
// allow matching may ignore.
func safeAssign(as shAssign) bool {
	return safeEnvVars()[as.name] && as.value.kind == wordLiteral
}

// setHarmless reports whether `set` only toggles errexit, nounset, xtrace,
// verbose or pipefail.
func setHarmless(args []shWord) bool {
	if len(args) == 0 {
		return false // bare set prints variables: harmless, but rare enough to ask
	}
	for i := 0; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return false
		}
		for j, c := range t[1:] {
			switch c {
			case 'e', 'u', 'x', 'v':
			case 'o':
				if j != len(t)-2 || i+1 >= len(args) {
					return false
				}
				v, _ := args[i+1].lit()
				if v != "pipefail" && v != "errexit" && v != "nounset" && v != "xtrace" {
					return false
				}
				i++
			default:
				return false
			}
		}
	}
	return true
}

// readHarmless reports whether `read` only reads into harmless variables.
func readHarmless(args []shWord) bool {
	for i := 0; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			return false
		}
		switch t {
		case "-r", "-s", "-e":
			continue
		case "-d", "-n", "-N", "-p", "-t", "-u":
			i++
			continue
		case "-a":
			if i+1 >= len(args) {
				return false
			}
			n, _ := args[i+1].lit()
			if !harmlessVar(n) {
				return false
			}
			i++
			continue
		}
		if strings.HasPrefix(t, "-") || !harmlessVar(t) {
			return false
		}
	}
	return true
}
