package permission

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// shellItem is one simple command with what is known about it.
type shellItem struct {
	idx     int
	cmd     *bashCmd
	form    []shWord // allow form: wrappers stripped
	canon   string   // the form rendered for allow rules
	ro      roResult
	fs      fsCall
	isFS    bool
	removal bool
	opaque  bool     // may do anything to the file system, links included
	side    []shWord // files written through options (sideWrites)
}

// gap is something in a command line that is not approved.
type gap struct {
	reasonType string
	msg        string
	path       string
	firm       bool
	item       *shellItem // the command that needs a rule, for suggestions
}

var devicesOnce lazy.Value[map[string]bool] // the value of devices, built at its first use

// devices returns write targets that are not files.
func devices() map[string]bool { return devicesOnce.Get(newDevices) }

func newDevices() map[string]bool {
	return map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
		"/dev/fd/1": true, "/dev/fd/2": true}
}

// judgeShell decides a Bash (or Monitor) command line: every simple
// command, every redirection and every file it is known to touch must be
// approved, and any deny rule that matches any part denies the whole.
func (st *state) judgeShell(tool string, input map[string]json.RawMessage, cwd, command string) verdict {
	a := analyzeBash(command, cwd, st.home)
	items := make([]*shellItem, len(a.cmds))
	var opaque []int
	for i, c := range a.cmds {
		it := &shellItem{idx: i, cmd: c}
		if len(c.args) > 0 {
			it.form, _ = allowForm(c.args)
			it.canon = renderCommand(c.assigns, it.form, false, true)
			it.ro = readOnlyCheck(it.form)
			for _, as := range c.assigns {
				if !safeAssign(as) {
					it.ro = roResult{}
				}
			}
			it.fs, it.isFS = parseFSCommand(it.form)
			it.removal = isRemoval(it.form)
			it.opaque = !c.transparent && !it.ro.ok && !(it.isFS && !it.fs.opaque)
			it.side = sideWrites(it.form)
			it.foldTrees()
		}
		if it.opaque {
			opaque = append(opaque, i)
		}
		items[i] = it
	}
	// stable reports whether a path check of the command owner still holds
	// when the command runs: no other command of the line may have created
	// links on the way in the meantime.
	stable := func(owner int, inLoop bool) bool { return runsBefore(a.cmds, opaque, owner, inLoop) }
	first := func(it *shellItem) string {
		if it == nil || len(it.form) == 0 {
			return "the command"
		}
		if t, ok := it.form[0].lit(); ok {
			return t
		}
		return "the command"
	}
	cmdText := strings.TrimSpace(command)

	// Deny rules, then ask rules: command patterns against every form of
	// every command, path rules against the files read and written.
	var mayDeny *rule
	for _, b := range []Behavior{Deny, Ask} {
		if b == Ask {
			if r := st.toolRule(Ask, tool, input); r != nil {
				return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgAskRule(tool, "`"+short(cmdText)+"`", r)}
			}
		}
		var hit, may *rule
		var hitPath string
		var pats []*rule
		for _, r := range st.compiled {
			if r.Behavior == b && r.kind == kindBash && r.appliesTo(tool) {
				pats = append(pats, r)
			}
		}
		for _, it := range items {
			if hit != nil {
				break
			}
			if len(it.cmd.args) == 0 {
				continue
			}
			for _, f := range denyForms(it.cmd.args) {
				s := renderDeny(f)
				if may == nil && len(pats) > 0 && (!asciiName(f[0]) || runsUnseenCode(f)) {
					// A look-alike of a denied name (fullwidth or Cyrillic
					// letters) runs whatever is installed under it; a shell
					// fed from a file or its input runs commands no rule
					// can be matched against.
					may = pats[0]
				}
				for _, r := range pats {
					if r.bash.match(s) {
						hit = r
						break
					} else if may == nil && r.bash.mayMatch(s) {
						may = r
					}
				}
				if hit != nil {
					break
				}
			}
		}
		if hit == nil && may == nil && a.unparsed && len(pats) > 0 {
			may = pats[0]
		}
		check := func(write bool, w shWord, cwds []string, stab bool) {
			if hit != nil {
				return
			}
			rules := st.pathRulesFor(b, write, tool)
			if len(rules) == 0 {
				return
			}
			cands, ok := st.wordPaths(w, cwds)
			if !ok {
				if may == nil {
					may = rules[0]
				}
				return
			}
			if r := matchPath(rules, cands, false); r != nil {
				hit, hitPath = r, matchingCand(r, cands)
				return
			}
			if !stab && may == nil {
				may = rules[0]
			}
		}
		for _, rd := range a.redirs {
			check(rd.write, rd.target, rd.cwds, stable(rd.owner, rd.inLoop))
		}
		for _, it := range items {
			stab := stable(it.idx, it.cmd.inLoop)
			if it.ro.ok {
				for _, w := range it.ro.reads {
					check(false, w, it.cmd.cwds, stab)
				}
				if it.ro.readsCwd {
					if it.cmd.cwds == nil {
						check(false, shWord{kind: wordUnknown}, nil, stab)
					}
					for _, c := range it.cmd.cwds {
						check(false, litWord(c), nil, stab)
					}
				}
			}
			if it.isFS {
				for _, w := range it.fs.writes {
					check(true, w, it.cmd.cwds, stab)
				}
				for _, w := range it.fs.reads {
					check(false, w, it.cmd.cwds, stab)
				}
			}
			for _, w := range it.side {
				check(true, w, it.cmd.cwds, stab)
			}
			for _, w := range it.treeWords() {
				if hit == nil && may == nil {
					may = st.treeMay(b, tool, w, it.cmd.cwds)
				}
			}
		}
		if hit != nil {
			if b == Deny {
				msg := msgDenyCommand(tool, cmdText, hit)
				if hitPath != "" {
					msg = msgDenyRule(tool, hitPath, hit)
				}
				return verdict{b: Deny, reasonType: ReasonRule, rule: hit, path: hitPath, msg: msg}
			}
			return verdict{b: Ask, reasonType: ReasonRule, rule: hit, firm: true, path: hitPath, msg: msgAskRule(tool, "`"+short(cmdText)+"`", hit)}
		}
		if b == Deny {
			mayDeny = may
			continue
		}
		if may != nil {
			return verdict{b: Ask, reasonType: ReasonRule, rule: may, firm: true, msg: msgMayDeny(tool, "`"+short(cmdText)+"`", may)}
		}
	}
	if mayDeny != nil {
		return verdict{b: Ask, reasonType: ReasonRule, rule: mayDeny, firm: true, msg: msgMayDeny(tool, "`"+short(cmdText)+"`", mayDeny)}
	}
	if r := st.hiddenCodeRule(tool); a.hidden != "" && r != nil { // text run as code evades every rule
		return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgHiddenCode(tool, "`"+short(cmdText)+"`", a.hidden, r)}
	}
	if a.unparsed {
		return verdict{b: Ask, reasonType: ReasonOther, msg: msgBashProblem(cmdText, a.problems[0])}
	}

	// Removals of critical paths are asked in every mode.
	criticalGap := func(it *shellItem) *gap {
		c, unknown, found := st.criticalRemoval(it)
		switch {
		case !found:
			return nil
		case unknown:
			return &gap{reasonType: ReasonSafetyCheck, firm: true, msg: msgBashUnknownTarget(first(it))}
		}
		return &gap{reasonType: ReasonSafetyCheck, firm: true, path: c, msg: msgBashCritical(first(it), c)}
	}
	protectedGap := func(it *shellItem) *gap {
		var writes []shWord
		if it.isFS {
			writes = append(writes, it.fs.writes...)
		}
		for _, w := range append(writes, it.side...) {
			cands, ok := st.wordPaths(w, it.cmd.cwds)
			if ok && st.anyProtected(cands) {
				return &gap{reasonType: ReasonSafetyCheck, firm: true, path: cands[0], msg: msgBashProtected(first(it), cands[0])}
			}
		}
		return nil
	}

	if st.mode == ModeBypass {
		for _, it := range items {
			if g := criticalGap(it); g != nil {
				return g.verdict()
			}
		}
		if g := st.bypassProtected(items, a.redirs, first); g != nil {
			return g.verdict() // protected paths are asked even in bypassPermissions
		}
		return allow(ReasonMode, nil)
	}

	whole := (*rule)(nil)
	if st.mode != ModePlan {
		whole = st.toolRule(Allow, tool, input)
	}
	if len(a.problems) > 0 && whole == nil {
		return verdict{b: Ask, reasonType: ReasonOther, msg: msgBashProblem(cmdText, a.problems[0])}
	}

	readOK := func(w shWord, cwds []string, stab bool) (string, bool) {
		cands, ok := st.wordPaths(w, cwds)
		if !ok {
			return "", false
		}
		if stab && st.insideAll(cands) {
			return "", true
		}
		if matchPath(st.pathRulesFor(Allow, false, tool), cands, true) != nil && stab {
			return "", true
		}
		return st.shownPath(cands), false
	}
	cwdsInside := func(cwds []string) bool {
		if cwds == nil {
			return false
		}
		for _, c := range cwds {
			if !st.insideAll(candidates(c)) {
				return false
			}
		}
		return true
	}

	var gaps []gap
	var byRule *rule
	sources := map[string]bool{}
	for _, it := range items {
		c := it.cmd
		if c.transparent {
			continue
		}
		if len(c.args) == 0 {
			ok := true
			for _, as := range c.assigns {
				ok = ok && harmlessVar(as.name)
			}
			if ok || whole != nil {
				continue
			}
			gaps = append(gaps, gap{reasonType: ReasonSubcommands, msg: msgBashCommand(cmdText, renderCommand(c.assigns, nil, false, false))})
			continue
		}
		if g := criticalGap(it); g != nil {
			gaps = append(gaps, *g)
			continue
		}
		prot := protectedGap(it)
		if p := st.protectedOperand(it); prot == nil && p != "" {
			prot = &gap{reasonType: ReasonSafetyCheck, firm: true, path: p, msg: msgBashProtected(first(it), p)}
		}
		if whole != nil {
			if prot != nil {
				gaps = append(gaps, *prot)
			}
			continue
		}
		stab := stable(it.idx, c.inLoop)
		// Allow rules (not in plan mode, where only read-only commands run).
		if st.mode != ModePlan {
			var hit *rule
			for _, r := range st.compiled {
				if r.Behavior != Allow || r.kind != kindBash || !r.appliesTo(tool) {
					continue
				}
				if r.bash.hasStar() && (runsOtherCommands(it.form) || execOrDelete(it.form)) {
					continue
				}
				if r.bash.match(it.canon) {
					hit = r
					break
				}
			}
			if hit != nil {
				if prot != nil {
					gaps = append(gaps, *prot)
					continue
				}
				sources["rule"] = true
				byRule = hit
				continue
			}
		}
		// Read-only commands, if everything they read is approved.
		var readGap *gap
		if it.ro.ok && !st.noReadOnly {
			ok := true
			for _, w := range it.ro.reads {
				if p, good := readOK(w, c.cwds, stab); !good {
					ok = false
					if p != "" {
						readGap = &gap{reasonType: ReasonWorkingDir, path: p, msg: st.msgShellRead(first(it), p)}
					}
					break
				}
			}
			if ok && it.ro.readsCwd && !(stab && cwdsInside(c.cwds)) {
				ok = false
			}
			if ok {
				sources["readonly"] = true
				continue
			}
		}
		// acceptEdits: the filesystem commands, inside the working
		// directories.
		var writeGap *gap
		if it.isFS && st.mode == ModeAcceptEdits && prot == nil {
			ok := true
			for _, w := range it.fs.writes {
				cands, known := st.wordPaths(w, c.cwds)
				if !known {
					ok = false
					writeGap = &gap{reasonType: ReasonSubcommands, msg: msgBashUnknownTarget(first(it)), item: it}
					break
				}
				if !stab || !st.insideAll(cands) {
					ok = false
					p := st.shownPath(cands)
					writeGap = &gap{reasonType: ReasonWorkingDir, path: p, msg: st.msgShellWrite(first(it), p), item: it}
					break
				}
			}
			for _, w := range it.fs.reads {
				if _, good := readOK(w, c.cwds, stab); !good {
					ok = false
				}
			}
			if ok {
				sources["mode"] = true
				continue
			}
		}
		switch {
		case prot != nil:
			gaps = append(gaps, *prot)
		case st.mode == ModePlan:
			gaps = append(gaps, gap{reasonType: ReasonMode, msg: msgBashPlan(cmdText)})
		case writeGap != nil:
			gaps = append(gaps, *writeGap)
		case it.isFS:
			p := ""
			if len(it.fs.writes) > 0 {
				if cands, ok := st.wordPaths(it.fs.writes[0], c.cwds); ok {
					p = st.shownPath(cands)
				}
			}
			if p != "" {
				gaps = append(gaps, gap{reasonType: ReasonSubcommands, path: p, msg: st.msgShellWrite(first(it), p), item: it})
			} else {
				gaps = append(gaps, gap{reasonType: ReasonSubcommands, msg: msgBashCommand(cmdText, it.cmd.src), item: it})
			}
		case readGap != nil:
			gaps = append(gaps, *readGap)
		default:
			gaps = append(gaps, gap{reasonType: ReasonSubcommands, msg: msgBashCommand(cmdText, it.cmd.src), item: it})
		}
	}
	for _, rd := range a.redirs {
		var owner *shellItem
		if rd.owner >= 0 {
			owner = items[rd.owner]
		}
		stab := stable(rd.owner, rd.inLoop)
		if !rd.write {
			if whole != nil {
				continue
			}
			if p, ok := readOK(rd.target, rd.cwds, stab); !ok {
				if p == "" {
					gaps = append(gaps, gap{reasonType: ReasonSubcommands, msg: msgBashUnknownTarget(first(owner))})
				} else {
					gaps = append(gaps, gap{reasonType: ReasonWorkingDir, path: p, msg: st.msgShellRead(first(owner), p)})
				}
			}
			continue
		}
		if t, ok := rd.target.lit(); ok && devices()[t] {
			continue
		}
		cands, ok := st.wordPaths(rd.target, rd.cwds)
		if !ok {
			gaps = append(gaps, gap{reasonType: ReasonSubcommands, msg: msgBashUnknownTarget(first(owner))})
			continue
		}
		p := st.shownPath(cands)
		switch {
		case st.anyProtected(cands):
			gaps = append(gaps, gap{reasonType: ReasonSafetyCheck, firm: true, path: p, msg: msgBashProtected(first(owner), p)})
		case st.mode == ModePlan:
			gaps = append(gaps, gap{reasonType: ReasonMode, path: p, msg: msgBashPlan(cmdText)})
		case whole != nil:
		case stab && st.mode == ModeAcceptEdits && st.insideAll(cands):
			sources["mode"] = true
		case stab && matchPath(st.pathRulesFor(Allow, true, tool), cands, true) != nil:
			sources["rule"] = true
		default:
			gaps = append(gaps, gap{reasonType: ReasonSubcommands, path: p, msg: st.msgShellWrite(first(owner), p)})
		}
	}
	if len(gaps) == 0 {
		switch {
		case whole != nil:
			return allow(ReasonRule, whole)
		case len(sources) == 1 && sources["rule"] && len(a.cmds) == 1:
			return allow(ReasonRule, byRule)
		case len(sources) == 1 && sources["mode"] && len(a.cmds) == 1:
			return allow(ReasonMode, nil)
		}
		return allow(ReasonSubcommands, nil)
	}
	v := gaps[0].verdict()
	v.suggest = st.shellSuggestions(gaps)
	return v
}

// runsUnseenCode reports whether a form is a shell that runs commands the
// analysis could not read: a script file, its standard input, or a -c
// payload that is only known when it runs (literal -c payloads and eval
// texts are analysed as commands of their own).
func runsUnseenCode(form []shWord) bool {
	name, ok := form[0].lit()
	if !ok {
		return false
	}
	base := filepath.Base(name)
	switch base {
	case "sh", "bash", "dash", "zsh", "ksh", "fish", "source", ".":
		p, seen := payloadOf(form)
		// {} is a placeholder that find and xargs fill in when they run.
		return !seen || strings.Contains(p, "{}")
	case "awk", "gawk", "mawk", "nawk", "busybox":
		return true
	case "xargs", "parallel":
		// They build command lines from their input: a shell or an
		// interpreter among their words runs text nobody has seen.
		for _, w := range form[1:] {
			if t, ok := w.lit(); ok && (codeRunners()[filepath.Base(t)] || inlineCode()[filepath.Base(t)] != nil) {
				return true
			}
		}
	}
	if flags := inlineCode()[base]; flags != nil {
		for _, w := range form[1:] {
			t, _ := w.lit()
			for _, f := range flags {
				if t == f || strings.HasPrefix(t, f) && !strings.HasPrefix(f, "--") {
					return true
				}
			}
		}
	}
	return false
}

var codeRunnersOnce lazy.Value[map[string]bool] // the value of codeRunners, built at its first use

// codeRunners returns the shells and script readers.
func codeRunners() map[string]bool { return codeRunnersOnce.Get(newCodeRunners) }

func newCodeRunners() map[string]bool {
	return map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true,
		"eval": true, "source": true, ".": true, "awk": true, "gawk": true, "mawk": true, "nawk": true, "busybox": true}
}

var inlineCodeOnce lazy.Value[map[string][]string] // the value of inlineCode, built at its first use

// inlineCode lists interpreters and the options that give them a program
// on the command line.
func inlineCode() map[string][]string { return inlineCodeOnce.Get(newInlineCode) }

func newInlineCode() map[string][]string {
	return map[string][]string{
		"python": {"-c"}, "python2": {"-c"}, "python3": {"-c"}, "perl": {"-e", "-E"}, "ruby": {"-e"},
		"node": {"-e", "-p", "--eval", "--print"}, "php": {"-r"}, "lua": {"-e"}, "Rscript": {"-e"}, "osascript": {"-e"},
		"pwsh": {"-c", "-Command"}, "deno": {"eval"}, "bun": {"-e", "--eval"},
	}
}

// asciiName reports whether a command name is plain ASCII text.
func asciiName(w shWord) bool {
	t, ok := w.lit()
	if !ok {
		return true // unknown names are covered by mayMatch
	}
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (g gap) verdict() verdict {
	return verdict{b: Ask, reasonType: g.reasonType, firm: g.firm, path: g.path, msg: g.msg}
}

// wordPaths returns the candidate absolute paths a path word may name in
// any of the directories it may be resolved in. It reports false when
// they cannot be known: expansions, a relative path after an unknown cd,
// or a glob with too many matches.
func (st *state) wordPaths(w shWord, cwds []string) ([]string, bool) {
	join := func(text string) ([]string, bool) {
		if filepath.IsAbs(text) {
			return candidates(text), true
		}
		if cwds == nil {
			return nil, false
		}
		var out []string
		for _, c := range cwds {
			out = addUnique(out, candidates(c+"/"+text)...)
		}
		return out, true
	}
	switch w.kind {
	case wordLiteral:
		if w.text == "" {
			return nil, false
		}
		return join(w.text)
	case wordTilde:
		if st.home == "" {
			return nil, false
		}
		return candidates(st.home + w.text), true
	case wordGlob:
		if strings.Count(w.pat, "/") > 8 || globSegments(w.pat) > 2 {
			return nil, false // too costly to expand here
		}
		var out []string
		lits, ok := join(w.text) // what the shell passes when nothing matches
		if !ok {
			return nil, false
		}
		out = append(out, lits...)
		var bases []string
		if filepath.IsAbs(w.text) {
			bases = []string{""}
		} else {
			for _, c := range cwds {
				bases = append(bases, escapeMatch(c)+"/")
			}
		}
		for _, b := range bases {
			matches, err := filepath.Glob(b + w.pat)
			if err != nil || len(matches) > 256 {
				return nil, false
			}
			for _, m := range matches {
				out = addUnique(out, candidates(m)...)
			}
		}
		return out, true
	}
	return nil, false
}

// globSegments counts the path segments of a pattern that hold a wildcard.
func globSegments(pat string) int {
	n := 0
	for _, seg := range strings.Split(pat, "/") {
		if strings.ContainsAny(seg, "*?") {
			n++
		}
	}
	return n
}

// escapeMatch escapes the characters filepath.Match gives a meaning to.
func escapeMatch(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shellSuggestions proposes rules that would let the unapproved commands
// run next time.
func (st *state) shellSuggestions(gaps []gap) []Update {
	var rules []RuleValue
	seen := map[string]bool{}
	for _, g := range gaps {
		if g.firm {
			return nil
		}
		if g.item == nil {
			continue
		}
		spec, ok := suggestSpec(g.item.form)
		if !ok || seen[spec] {
			continue
		}
		seen[spec] = true
		rules = append(rules, RuleValue{ToolName: "Bash", RuleContent: spec})
	}
	if len(rules) == 0 {
		return nil
	}
	return []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal, Rules: rules}}
}

var multiCommandToolsOnce lazy.Value[map[string]bool] // the value of multiCommandTools, built at its first use

// multiCommandTools returns programs whose second word names what they do.
func multiCommandTools() map[string]bool { return multiCommandToolsOnce.Get(newMultiCommandTools) }

func newMultiCommandTools() map[string]bool {
	return map[string]bool{
		"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "cargo": true, "go": true, "docker": true,
		"kubectl": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "deno": true, "gh": true, "dotnet": true,
		"mvn": true, "gradle": true, "terraform": true, "helm": true, "make": true, "npx": true, "brew": true,
	}
}

// suggestSpec proposes a Bash rule specifier for a command: a prefix rule
// on its name (and subcommand), or the exact command for programs that
// run others or remove files.
func suggestSpec(form []shWord) (string, bool) {
	name, ok := baseName(form[0])
	if !ok {
		return "", false
	}
	exact := runsOtherCommands(form)
	switch name {
	case "rm", "rmdir", "dd", "mkfs", "chmod", "chown", "kill", "pkill", "shred", "python", "python3", "node",
		"perl", "ruby", "php", "awk", "sed", "curl", "wget", "ssh", "scp", "rsync", "tee", "ln", "truncate":
		exact = true
	}
	if exact {
		s := renderCommand(nil, form, false, false)
		if strings.ContainsAny(s, unknownWord+"*") {
			return "", false // a '*' would widen the rule; an unknown word cannot be written
		}
		return s, true
	}
	prefix := name
	if multiCommandTools()[name] && len(form) > 1 {
		if sub, ok := form[1].lit(); ok && sub != "" && !strings.HasPrefix(sub, "-") && safeText(sub, false) {
			prefix += " " + sub
			if sub == "run" && len(form) > 2 {
				if s, ok := form[2].lit(); ok && s != "" && !strings.HasPrefix(s, "-") && safeText(s, false) {
					prefix += " " + s
				}
			}
		}
	}
	return prefix + ":*", true
}
