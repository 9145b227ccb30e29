package permission

import (
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

var findActionsOnce lazy.Value[map[string]bool] // the value of findActions, built at its first use

// findActions returns the find primaries that run programs, delete, or write
// files, or that follow links out of the tree or read starting points from
// a file.
func findActions() map[string]bool { return findActionsOnce.Get(newFindActions) }

func newFindActions() map[string]bool {
	return set("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
		"-L", "-follow", "-files0-from")
}

// findReadOnly accepts find without the actions that run commands, delete
// or write files. It lists names below its starting points (or the
// working directory) and reads no file's contents.
func findReadOnly(args []shWord) roResult {
	i := 0
	for ; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			break
		}
		switch {
		case t == "-H" || t == "-P":
			continue
		case t == "-D" || t == "-O":
			i++ // debug options and optimisation level
			continue
		case strings.HasPrefix(t, "-O") && len(t) > 2:
			continue
		}
		break
	}
	var starts []shWord
	for ; i < len(args); i++ {
		w := args[i]
		if w.mayBeFlag() || w.is("(") || w.is("!") || w.is(")") {
			break
		}
		starts = append(starts, w)
	}
	for ; i < len(args); i++ {
		w := args[i]
		if w.kind != wordLiteral && w.mayBeFlag() {
			return roResult{}
		}
		if t, _ := w.lit(); findActions()[t] {
			return roResult{} // runs, writes, or follows links out of the tree
		}
	}
	return roResult{ok: true, reads: starts, readsCwd: len(starts) == 0}
}

// findRemoves reports whether a find command line may remove or change
// files below its starting points: -delete, or a program run by -exec and
// its kin that is not known to only read. It returns the starting points
// (none: the working directory).
func findRemoves(form []shWord) (starts []shWord, removes bool) {
	args := form[1:]
	i := 0
	for i < len(args) && (args[i].is("-H") || args[i].is("-P") || args[i].is("-L")) {
		i++
	}
	for ; i < len(args); i++ {
		w := args[i]
		if w.mayBeFlag() || w.is("(") || w.is("!") || w.is(")") {
			break
		}
		starts = append(starts, w)
	}
	for ; i < len(args); i++ {
		w := args[i]
		if w.kind != wordLiteral && w.mayBeFlag() {
			return starts, true // could be -delete
		}
		if w.is("-delete") {
			return starts, true
		}
		if isFindExec(w) {
			if i+1 >= len(args) {
				return starts, true
			}
			name, ok := baseName(args[i+1])
			if !ok {
				if t, isLit := args[i+1].lit(); isLit {
					name = t[strings.LastIndexByte(t, '/')+1:]
				} else {
					return starts, true
				}
			}
			if !findExecHarmless()[name] {
				return starts, true
			}
		}
	}
	return starts, false
}

var findExecHarmlessOnce lazy.Value[map[string]bool] // the value of findExecHarmless, built at its first use

// findExecHarmless returns programs commonly run by find -exec that do not
// remove or change the files they are given.
func findExecHarmless() map[string]bool { return findExecHarmlessOnce.Get(newFindExecHarmless) }

func newFindExecHarmless() map[string]bool {
	return set("echo", "printf", "cat", "head", "tail", "wc", "ls", "stat", "file", "grep", "egrep",
		"fgrep", "md5sum", "sha1sum", "sha256sum", "sha512sum", "basename", "dirname", "realpath", "readlink",
		"du", "test", "[", "diff", "cmp")
}
