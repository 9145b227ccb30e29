package permission

import "strings"

// Protected paths in shell commands.
//
// The file tools name the one path they write, and the filesystem commands
// of acceptEdits (fscmd.go) and redirections are understood well enough to
// know theirs. Other commands that change files (tee, ln, install, chmod,
// dd of=…, interpreters running a script on a file, …) are not: for them an
// argument that names a protected path is taken as a write to it. That is
// what keeps `tee -a ~/.bashrc` or `chmod +x .git/hooks/pre-commit` from
// running unasked in bypassPermissions, or under an allow rule such as
// Bash(tee:*). A read-only command (cat .git/config) is not affected.

// protectedOperand returns the first protected path that an argument of a
// command that is not read-only names, or "" if none does. Option values
// written --opt=PATH or key=PATH count too.
func (st *state) protectedOperand(it *shellItem) string {
	if it == nil || it.ro.ok || it.isFS || len(it.cmd.args) < 2 { // fs commands: fs.writes
		return ""
	}
	for _, w := range it.cmd.args[1:] {
		words := []shWord{w}
		if t, ok := w.lit(); ok {
			if _, v, found := strings.Cut(t, "="); found && v != "" {
				words = append(words, litWord(v))
			}
		}
		for _, x := range words {
			cands, ok := st.wordPaths(x, it.cmd.cwds)
			if !ok {
				continue
			}
			for _, c := range cands {
				if st.isProtected(c) {
					return c
				}
			}
		}
	}
	return ""
}

// bypassProtected finds, in bypassPermissions, a write to a protected
// path that the command line shows: a redirection to one, a filesystem
// command's operand, or an argument of another command that is not
// read-only. Writes whose target is only known when the command runs are
// not found here (the sandbox's denyWrite is the wall for those).
func (st *state) bypassProtected(items []*shellItem, redirs []*bashRedir, first func(*shellItem) string) *gap {
	for _, rd := range redirs {
		if !rd.write {
			continue
		}
		if t, ok := rd.target.lit(); ok && devices()[t] {
			continue
		}
		cands, ok := st.wordPaths(rd.target, rd.cwds)
		if !ok || !st.anyProtected(cands) {
			continue
		}
		var owner *shellItem
		if rd.owner >= 0 && rd.owner < len(items) {
			owner = items[rd.owner]
		}
		p := st.shownProtected(cands)
		return &gap{reasonType: ReasonSafetyCheck, firm: true, path: p, msg: msgBashProtected(first(owner), p)}
	}
	for _, it := range items {
		if it.cmd.transparent {
			continue
		}
		if it.isFS {
			for _, w := range it.fs.writes {
				if cands, ok := st.wordPaths(w, it.cmd.cwds); ok && st.anyProtected(cands) {
					p := st.shownProtected(cands)
					return &gap{reasonType: ReasonSafetyCheck, firm: true, path: p, msg: msgBashProtected(first(it), p)}
				}
			}
		}
		if p := st.protectedOperand(it); p != "" {
			return &gap{reasonType: ReasonSafetyCheck, firm: true, path: p, msg: msgBashProtected(first(it), p)}
		}
	}
	return nil
}
