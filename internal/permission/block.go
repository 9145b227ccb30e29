package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
)

// The settings that fence the file tools into the working directories,
// as messages name them.
const (
	SettingBlockWrites = "permissions.blockWritesOutsideWorkingDirectories"
	SettingBlockReads  = "permissions.blockReadsOutsideWorkingDirectories"
)

// Block fences the file tools into the working directories. It is judged
// before anything else and in every mode, bypassPermissions included: no
// rule, mode, classifier, hook or callback lifts a refusal.
//
//   - With Writes, Write, Edit, MultiEdit and NotebookEdit are denied
//     outside the working directories, and on a settings file
//     (.claude/settings.json, .claude/settings.local.json anywhere, and
//     each path of Settings) even inside them.
//   - With Reads, Read, Grep, Glob and LSP are denied outside the working
//     directories (Exempt lets paths through), Grep and Glob leave out
//     what lies outside while they walk (ReadDeniedAs), and a Bash or
//     Monitor command that names a path outside them, or whose paths
//     cannot be known, is asked (denied in dontAsk mode).
//
// A path counts as inside only when it and every form it reaches through
// links lie inside; a path in Exclude counts as outside unless a working
// directory lies in that excluded path and holds it. Paths in Session,
// the session's own files, are never refused.
type Block struct {
	Writes, Reads bool
	// Exempt are absolute paths (a directory and all below it, or a
	// file) that Reads lets through.
	Exempt []string
	// Exclude are absolute paths treated as outside every working
	// directory.
	Exclude []string
	// Session are the directories and files the session keeps for itself
	// (tool-result spill files, background output, …).
	Session []string
	// Settings are settings files that Writes refuses wherever they lie.
	Settings []string
}

// blockForms holds Block's paths with their physical forms.
type blockForms struct {
	Block
	exempt, exclude, session, settings []string
}

func newBlockForms(b Block) *blockForms {
	if !b.Writes && !b.Reads {
		return nil
	}
	f := &blockForms{Block: b}
	forms := func(in []string) []string {
		var out []string
		for _, p := range in {
			if filepath.IsAbs(p) {
				c := filepath.Clean(p)
				out = addUnique(out, c, resolvePhysical(c))
			}
		}
		return out
	}
	f.exempt, f.exclude, f.session, f.settings = forms(b.Exempt), forms(b.Exclude), forms(b.Session), forms(b.Settings)
	return f
}

// Blocked returns the decision of the block settings alone on call: a
// Deny or an Ask (a Deny in dontAsk mode), or a zero Decision when they
// let the call through to the usual checks. It consults nothing else and
// makes no classifier call.
func (c *Checker) Blocked(call Call) Decision {
	st := c.state()
	tool := canonicalToolName(call.Tool)
	var input map[string]json.RawMessage
	if json.Unmarshal(call.Input, &input) != nil {
		input = nil
	}
	v, ok := st.blockVerdict(tool, input, st.callCwd(call))
	if !ok {
		return Decision{}
	}
	return st.finish(context.Background(), &call, tool, &v)
}

// callCwd is the directory a call's relative paths start from.
func (st *state) callCwd(call Call) string {
	if call.Cwd == "" || !filepath.IsAbs(call.Cwd) {
		return st.cwd()
	}
	return filepath.Clean(call.Cwd)
}

// withinAny reports whether p lies in one of dirs.
func (st *state) withinAny(dirs []string, p string) bool {
	for _, d := range dirs {
		if within(d, p, st.fold) {
			return true
		}
	}
	return false
}

// excluded reports whether p lies in a path of workingDirectoriesExclude
// and in no working directory that itself lies in that path.
func (st *state) excluded(p string) bool {
	for _, e := range st.block.exclude {
		if !within(e, p, st.fold) {
			continue
		}
		held := false
		for _, d := range st.dirForms {
			if within(e, d, st.fold) && within(d, p, st.fold) {
				held = true
				break
			}
		}
		if !held {
			return true
		}
	}
	return false
}

// fenced reports whether the block settings let a file tool reach every
// candidate; exempt says whether blockReadsExemptPaths count.
func (st *state) fenced(cands []string, exempt bool) (string, bool) {
	if len(cands) == 0 {
		return "", false
	}
	for _, c := range cands {
		switch {
		case st.withinAny(st.block.session, c):
		case st.excluded(c):
			return c, false
		case st.inside(c):
		case exempt && st.withinAny(st.block.exempt, c):
		default:
			return c, false
		}
	}
	return "", true
}

// settingsFile returns the candidate that is a settings file, or "".
func (st *state) settingsFile(cands []string) string {
	for _, c := range cands {
		if st.withinAny(st.block.settings, c) {
			return c
		}
		base, dir := filepath.Base(c), filepath.Base(filepath.Dir(c))
		if st.fold {
			base, dir = strings.ToLower(base), strings.ToLower(dir)
		}
		if dir == ".claude" && (base == "settings.json" || base == "settings.local.json") {
			return c
		}
	}
	return ""
}

// blockVerdict is the verdict of the block settings on a call, and
// whether they decide it.
func (st *state) blockVerdict(tool string, input map[string]json.RawMessage, cwd string) (verdict, bool) {
	b := st.block
	if b == nil {
		return verdict{}, false
	}
	class := toolClass(tool)
	switch {
	case class == classEdit && b.Writes, class == classRead && b.Reads:
	case class == classShell && b.Reads:
		return st.blockShell(tool, input, cwd)
	default:
		return verdict{}, false
	}
	write := class == classEdit
	setting := SettingBlockReads
	if write {
		setting = SettingBlockWrites
	}
	raw := stringField(input, pathField(tool))
	if raw == "" && (tool == "Glob" || tool == "Grep") {
		raw = cwd
	}
	abs, err := absolute(cwd, st.home, raw)
	if err != nil {
		return verdict{b: Deny, blocked: true, reasonType: ReasonWorkingDir, msg: msgBlockUnknown(tool, setting)}, true
	}
	clean := filepath.Clean(abs)
	cands, phys := candidatesPhys(abs)
	if tool == "Glob" {
		extra, ok := st.globRoot(stringField(input, "pattern"), clean)
		if !ok {
			return verdict{b: Deny, blocked: true, reasonType: ReasonWorkingDir, path: clean, msg: msgBlockUnknown(tool, setting)}, true
		}
		cands = addUnique(cands, extra...)
	}
	v := verdict{b: Deny, blocked: true, reasonType: ReasonWorkingDir}
	if isFileTool(tool) {
		v.resolved = phys
	}
	if write {
		if p := st.settingsFile(cands); p != "" {
			v.reasonType, v.path, v.msg = ReasonSafetyCheck, p, msgBlockSettings(tool, p)
			return v, true
		}
	}
	if p, ok := st.fenced(cands, !write); !ok {
		v.path, v.msg = p, msgBlockOutside(tool, p, setting, write)
		return v, true
	}
	return verdict{}, false
}

// blockShell asks for a shell command that names a path outside the
// working directories, or whose paths cannot be known.
func (st *state) blockShell(tool string, input map[string]json.RawMessage, cwd string) (verdict, bool) {
	command := stringField(input, "command")
	a := analyzeBash(command, cwd, st.home)
	ask := func(p string) (verdict, bool) {
		return verdict{b: Ask, blocked: true, reasonType: ReasonWorkingDir, firm: true, path: p, msg: msgBlockShell(tool, command, p)}, true
	}
	if a.unparsed || a.hidden != "" {
		return ask("")
	}
	check := func(w shWord, cwds []string) (verdict, bool) {
		if w.kind == wordLiteral && (devices()[w.text] || w.text == "/dev/stdin" || w.text == "/dev/fd/0") {
			return verdict{}, false
		}
		var texts []shWord
		switch w.kind {
		case wordLiteral:
			texts = append(texts, w)
			if _, after, ok := strings.Cut(w.text, "="); ok && after != "" {
				texts = append(texts, literalPath(after))
			}
			if strings.HasPrefix(w.text, "-") {
				if i := strings.IndexAny(w.text, "/~"); i > 0 {
					texts = append(texts, literalPath(w.text[i:]))
				}
			}
		case wordTilde, wordGlob:
			texts = append(texts, w)
		default:
			return ask("")
		}
		for _, t := range texts {
			cands, ok := st.wordPaths(t, cwds)
			if !ok {
				if t.kind == wordLiteral && t.text == "" {
					continue
				}
				return ask("")
			}
			if p, ok := st.fenced(cands, true); !ok {
				return ask(p)
			}
		}
		return verdict{}, false
	}
	for _, c := range a.cmds {
		if len(c.args) > 0 && c.cwds == nil {
			return ask("") // relative paths cannot be placed
		}
		for _, as := range c.assigns {
			if v, hit := check(as.value, c.cwds); hit {
				return v, hit
			}
		}
		for i, w := range c.args {
			if i == 0 && w.kind == wordLiteral {
				continue // the program run, not a file read
			}
			if v, hit := check(w, c.cwds); hit {
				return v, hit
			}
		}
	}
	for _, rd := range a.redirs {
		if rd.cwds == nil {
			return ask("")
		}
		if v, hit := check(rd.target, rd.cwds); hit {
			return v, hit
		}
	}
	return verdict{}, false
}

// literalPath is a word for the text of a path found inside another word
// ("--file=/etc/x", "-f/etc/x"): "~/…" is the home directory.
func literalPath(text string) shWord {
	if text == "~" || strings.HasPrefix(text, "~/") {
		return shWord{kind: wordTilde, text: text[1:]}
	}
	return shWord{kind: wordLiteral, text: text}
}

// blockReadDenied reports, for the walk of Grep and Glob, whether the
// block settings hide one of names (see ReadDeniedAs).
func (st *state) blockReadDenied(tool string, names []string) bool {
	if st.block == nil || !st.block.Reads {
		return false
	}
	switch canonicalToolName(tool) {
	case "Grep", "Glob":
		_, ok := st.fenced(names, true)
		return !ok
	}
	return false
}

func msgBlockOutside(tool, p, setting string, write bool) string {
	verb := "read"
	if write {
		verb = "write to"
	}
	return tool + " may not " + verb + " " + p + ": it lies outside the working directories, and " + setting +
		" is on, which no permission mode, rule or approval can lift."
}

func msgBlockSettings(tool, p string) string {
	return tool + " may not write to " + p + ": it is a settings file, and " + SettingBlockWrites +
		" is on, which keeps the file tools away from settings files wherever they lie."
}

func msgBlockUnknown(tool, setting string) string {
	return "Cannot tell which files this " + tool + " call reaches, and " + setting +
		" is on, which refuses file-tool access outside the working directories."
}

func msgBlockShell(tool, command, p string) string {
	what := "names a path agentloop cannot place"
	if p != "" {
		what = "names " + p + ", which lies outside the working directories"
	}
	return "This " + tool + " command (`" + short(strings.TrimSpace(command)) + "`) " + what + ", and " + SettingBlockReads +
		" is on, so it needs approval in every permission mode, and there is no one to ask."
}

// NoPrompt reports whether calls that would be asked are to be denied
// instead (Config.NoPrompt). The checker's own decisions do not change:
// the caller consults its PermissionRequest hooks first and then denies
// rather than asks.
func (c *Checker) NoPrompt() bool { return c.cur.Load().noPrompt }
