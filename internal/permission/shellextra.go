package permission

import "path/filepath"

// Helpers of judgeShell for the checks of readonly.go, fscmd.go and
// optcmd.go: whole-tree reads, critical removals, and the order in which
// the commands of a line run.

// foldTrees adds the trees an item reads to its plain reads, so that the
// working-directory and rule checks of reads cover them; the checks below
// the trees are treeMay's.
func (it *shellItem) foldTrees() {
	if it.ro.ok {
		it.ro.reads = append(it.ro.reads, it.ro.trees...)
		it.ro.readsCwd = it.ro.readsCwd || it.ro.treeCwd
	}
	if it.isFS {
		it.fs.reads = append(it.fs.reads, it.fs.trees...)
	}
}

// treeWords lists the directories an item reads as whole trees; a nil
// working directory list gives an unknown word.
func (it *shellItem) treeWords() []shWord {
	var out []shWord
	if it.ro.ok {
		out = append(out, it.ro.trees...)
		if it.ro.treeCwd {
			if it.cmd.cwds == nil {
				out = append(out, shWord{kind: wordUnknown})
			}
			for _, c := range it.cmd.cwds {
				out = append(out, litWord(c))
			}
		}
	}
	if it.isFS {
		out = append(out, it.fs.trees...)
	}
	return out
}

// treeMay returns a rule of behavior b on reading with tool that may
// apply to something below the tree w, or nil: reading a directory whole
// that holds a denied file must be asked.
func (st *state) treeMay(b Behavior, tool string, w shWord, cwds []string) *rule {
	rules := st.pathRulesFor(b, false, tool)
	if len(rules) == 0 {
		return nil
	}
	cands, ok := st.wordPaths(w, cwds)
	if !ok {
		return rules[0]
	}
	return st.treeRule(rules, cands)
}

// criticalRemoval finds a removal of a critical path in an item: rm and
// its kin, find -delete or -exec, rsync --delete, in the command itself,
// behind the wrappers it runs, and in what xargs and parallel build from
// their input. It reports the path, or unknown when a removal's target is
// only known when it runs.
func (st *state) criticalRemoval(it *shellItem) (path string, unknown, found bool) {
	if len(it.cmd.args) == 0 {
		return "", false, false
	}
	forms := denyForms(it.cmd.args)
	if name, ok := it.cmd.args[0].lit(); ok && (filepath.Base(name) == "xargs" || filepath.Base(name) == "parallel") {
		for i := 1; i < len(it.cmd.args); i++ {
			tail := append(append([]shWord(nil), it.cmd.args[i:]...), shWord{kind: wordUnknown, split: true})
			forms = append(forms, tail)
		}
	}
	for _, f := range forms {
		targets, cwd, unsure, removes := removalTargets(f)
		if !removes {
			continue
		}
		if unsure || cwd && it.cmd.cwds == nil {
			return "", true, true
		}
		if cwd {
			for _, c := range it.cmd.cwds {
				targets = append(targets, litWord(c))
			}
		}
		for _, w := range targets {
			cands, ok := st.wordPaths(w, it.cmd.cwds)
			if !ok {
				return "", true, true
			}
			for _, c := range cands {
				if st.critical(c) {
					return c, false, true
				}
			}
		}
	}
	return "", false, false
}

// runsBefore reports whether the path checks of command owner still hold
// when it runs, given the commands of the line that may create or move
// links (opaque): each must run after it, in sequence (not alongside it in
// a pipeline or in the background), and neither may be in a loop.
func runsBefore(cmds []*bashCmd, opaque []int, owner int, inLoop bool) bool {
	for _, o := range opaque {
		if inLoop {
			return false
		}
		if o == owner {
			continue
		}
		if owner < 0 || o < owner || cmds[owner].async || cmds[o].async || cmds[o].inLoop {
			return false
		}
	}
	return true
}
