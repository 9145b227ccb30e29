package permission

import (
	"path"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// git is read-only when its global options and its subcommand only look
// at the repository. The rules:
//
//   - Global options are git's own (exact names, as git does not accept
//     abbreviations there); -c, --config-env, --exec-path=…, --git-dir,
//     --work-tree, --namespace, --bare and anything unknown make it not
//     read-only. -C DIR is a read of DIR, and relative operands are then
//     resolved from DIR.
//   - Subcommands come from an allow list; those that can write, fetch or
//     run programs are allowed only in their listing forms (branch, tag,
//     remote, config, stash, worktree, reflog).
//   - Options that run programs or write files are refused wherever they
//     appear, with the abbreviations git's option parser accepts:
//     --output, --ext-diff, --textconv, --open-files-in-pager (-O for
//     grep), --filters, --upload-pack, --receive-pack, --remote, --exec.
//   - Every operand is judged as a path git may read (a revision such as
//     HEAD~1 names a path inside the working directory and passes), and so
//     are the files named by options (-O<orderfile>, blame --contents and
//     -S, grep -f, ls-files -X, config -f). diff with --no-index and grep
//     with --untracked or --no-index read their operands (or the working
//     directory) as whole trees.

var gitGlobalFlagsOnce lazy.Value[map[string]bool] // the value of gitGlobalFlags, built at its first use

// gitGlobalFlags returns the global options without a value that only change
// how git reads or prints.
func gitGlobalFlags() map[string]bool { return gitGlobalFlagsOnce.Get(newGitGlobalFlags) }

func newGitGlobalFlags() map[string]bool {
	return set("--no-pager", "-P", "-p", "--paginate", "--no-optional-locks", "--literal-pathspecs",
		"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch",
		"--version", "--html-path", "--man-path", "--info-path", "--exec-path", "--no-advice")
}

// gitDangerous are long options that write files, run programs or reach
// the network, in any subcommand.
var gitDangerous = []string{"--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--filters",
	"--upload-pack", "--receive-pack", "--remote", "--exec", "--config-env", "--git-dir", "--work-tree"}

var gitSafeLongOnce lazy.Value[map[string]bool] // the value of gitSafeLong, built at its first use

// gitSafeLong returns long options that a dangerous name is a prefix of but
// that are harmless themselves.
func gitSafeLong() map[string]bool { return gitSafeLongOnce.Get(newGitSafeLong) }

func newGitSafeLong() map[string]bool {
	return set("--output-indicator-new", "--output-indicator-old", "--output-indicator-context")
}

var gitDiffFamilyOnce lazy.Value[map[string]bool] // the value of gitDiffFamily, built at its first use

// gitDiffFamily returns the subcommands that take diff options (-O<orderfile>).
func gitDiffFamily() map[string]bool { return gitDiffFamilyOnce.Get(newGitDiffFamily) }

func newGitDiffFamily() map[string]bool {
	return set("diff", "log", "show", "whatchanged", "diff-tree", "diff-files", "diff-index", "stash", "shortlog", "reflog")
}

var gitPlainOnce lazy.Value[map[string]bool] // the value of gitPlain, built at its first use

// gitPlain returns the subcommands that only read, whatever their options
// (bar the dangerous ones).
func gitPlain() map[string]bool { return gitPlainOnce.Get(newGitPlain) }

func newGitPlain() map[string]bool {
	return set("status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "describe", "shortlog",
		"cat-file", "rev-list", "merge-base", "show-ref", "name-rev", "for-each-ref", "count-objects", "grep",
		"whatchanged", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr", "version", "annotate",
		"show-branch", "var", "verify-commit", "verify-tag", "cherry")
}

func gitReadOnly(args []shWord) roResult {
	var r roResult
	dir := "" // the -C directory, joined; "" for none
	i := 0
globals:
	for ; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			return roResult{}
		}
		switch {
		case gitGlobalFlags()[t]:
		case t == "-C":
			if i+1 >= len(args) {
				return roResult{}
			}
			d, ok := args[i+1].lit()
			if !ok {
				return roResult{} // a directory only known when it runs
			}
			i++
			if d == "" {
				continue
			}
			if dir != "" && !path.IsAbs(d) {
				d = dir + "/" + d
			}
			dir = d
			r.reads = append(r.reads, litWord(dir))
		case strings.HasPrefix(t, "-"):
			return roResult{} // -c, --config-env, --git-dir, --work-tree, --exec-path=…, --namespace, …
		default:
			break globals
		}
	}
	r.ok, r.readsCwd = true, true
	if i >= len(args) {
		return r
	}
	// rel resolves an operand from the -C directory.
	rel := func(w shWord) shWord {
		if t, ok := w.lit(); ok && dir != "" && t != "" && !path.IsAbs(t) {
			return litWord(dir + "/" + t)
		}
		if dir != "" && w.kind != wordLiteral && w.kind != wordTilde {
			return shWord{kind: wordUnknown}
		}
		return w
	}
	sub, _ := args[i].lit()
	rest := args[i+1:]
	s, ok := gitScan(sub, rest)
	if !ok || !gitSubOK(sub, rest) {
		return roResult{}
	}
	for _, w := range s.reads {
		r.reads = append(r.reads, rel(w))
	}
	for _, w := range s.trees {
		r.trees = append(r.trees, rel(w))
	}
	if s.treeCwd {
		if dir != "" {
			r.trees = append(r.trees, litWord(dir))
		} else {
			r.treeCwd = true
		}
	}
	return r
}

// gitScanned is what gitScan found in a subcommand's words.
type gitScanned struct {
	reads, trees []shWord
	treeCwd      bool
}

// gitScan checks the words after a git subcommand for options that write,
// run programs or reach the network, and collects the paths they may read.
func gitScan(sub string, rest []shWord) (gitScanned, bool) {
	var s gitScanned
	var operands []shWord
	tree := false
	fileShort := ""
	var fileLong []string
	switch sub {
	case "grep":
		fileShort, fileLong = "f", []string{"--file"}
	case "blame", "annotate":
		fileShort, fileLong = "S", []string{"--contents", "--ignore-revs-file"}
	case "ls-files":
		fileShort, fileLong = "X", []string{"--exclude-from"}
	case "config":
		fileShort, fileLong = "f", []string{"--file"}
	}
	if gitDiffFamily()[sub] {
		fileShort += "O"
	}
	fileLong = append(fileLong, "--pathspec-from-file")
	dashdash := false
	for _, w := range rest {
		t, lit := w.lit()
		switch {
		case dashdash:
			operands = append(operands, w)
		case !lit:
			if w.mayBeFlag() {
				return s, false
			}
			operands = append(operands, w)
		case t == "--":
			dashdash = true
		case t == "-" || !strings.HasPrefix(t, "-"):
			operands = append(operands, w)
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t, "=")
			if !gitSafeLong()[name] {
				for _, d := range gitDangerous {
					if strings.HasPrefix(d, name) && len(name) > 2 {
						return s, false
					}
				}
			}
			for _, f := range fileLong {
				if eq && optMatches(name, f) {
					s.reads = append(s.reads, litWord(val))
				}
			}
			if sub == "grep" && (optMatches(name, "--untracked") || optMatches(name, "--no-index")) ||
				sub == "diff" && optMatches(name, "--no-index") {
				tree = true
			}
		default: // a cluster of short options
			if sub == "grep" && strings.ContainsRune(t, 'O') {
				return s, false // -O[pager]: open the matches in a program
			}
			for k := 1; k < len(t); k++ {
				if strings.IndexByte(fileShort, t[k]) >= 0 && k+1 < len(t) {
					s.reads = append(s.reads, litWord(t[k+1:]))
				}
			}
		}
	}
	if tree || sub == "diff" {
		// diff compares trees of files: its path operands are read whole.
		s.trees = append(s.trees, operands...)
	} else {
		s.reads = append(s.reads, operands...)
	}
	// git grep's pattern is an operand unless -e or -f gave it, and the
	// paths after it are optional: a tree search may cover the working
	// directory whatever the operands.
	s.treeCwd = tree && (len(operands) == 0 || sub == "grep")
	return s, true
}

// gitSubOK reports whether a subcommand, with its words, only reads.
func gitSubOK(sub string, rest []shWord) bool {
	first := ""
	if len(rest) > 0 {
		first, _ = rest[0].lit()
	}
	switch {
	case gitPlain()[sub]:
		return true
	case sub == "branch":
		return gitListOnly(rest, gitBranchOpts())
	case sub == "tag":
		return gitListOnly(rest, gitTagOpts())
	case sub == "remote":
		return gitRemoteReadOnly(rest)
	case sub == "config":
		return gitConfigReadOnly(rest)
	case sub == "stash":
		return first == "list" || first == "show"
	case sub == "worktree":
		return first == "list"
	case sub == "reflog":
		for _, w := range rest {
			switch w.text {
			case "expire", "delete", "drop", "write":
				return false
			}
		}
		return true
	}
	return false
}

// poSpec describes a git command's options as its parse-options table
// does: how each long option takes a value, which short options exist.
// Options not listed are refused.
type poSpec struct {
	long       map[string]poKind
	shortFlags string // short options without a value
	shortReq   string // short options with a value (attached or next word)
	shortOpt   string // short options with an optional attached value
	listing    string // the option names that switch to listing by name
}

type poKind uint8

const (
	poFlag     poKind = iota + 1
	poRequired        // "=v" or the next word
	poOptional        // only "=v"
	poLastArg         // "=v", else the next word if there is one
	poBad             // an option that writes: refused
)

var gitBranchOptsOnce lazy.Value[poSpec] // the value of gitBranchOpts, built at its first use

func gitBranchOpts() poSpec { return gitBranchOptsOnce.Get(newGitBranchOpts) }

func newGitBranchOpts() poSpec {
	return poSpec{
		long: map[string]poKind{
			"list": poFlag, "all": poFlag, "remotes": poFlag, "verbose": poFlag, "quiet": poFlag, "ignore-case": poFlag,
			"show-current": poFlag, "omit-empty": poFlag, "no-column": poFlag, "no-color": poFlag, "no-abbrev": poFlag,
			"contains": poLastArg, "no-contains": poLastArg, "merged": poLastArg, "no-merged": poLastArg,
			"points-at": poRequired, "sort": poRequired, "format": poRequired,
			"color": poOptional, "column": poOptional, "abbrev": poOptional,
			"delete": poBad, "move": poBad, "copy": poBad, "force": poBad, "track": poBad, "no-track": poBad,
			"set-upstream-to": poBad, "unset-upstream": poBad, "edit-description": poBad, "create-reflog": poBad,
			"recurse-submodules": poBad, "set-upstream": poBad,
		},
		shortFlags: "larvqi",
		listing:    "--list -l",
	}
}

var gitTagOptsOnce lazy.Value[poSpec] // the value of gitTagOpts, built at its first use

func gitTagOpts() poSpec { return gitTagOptsOnce.Get(newGitTagOpts) }

func newGitTagOpts() poSpec {
	return poSpec{
		long: map[string]poKind{
			"list": poFlag, "ignore-case": poFlag, "omit-empty": poFlag, "no-column": poFlag, "no-color": poFlag,
			"contains": poLastArg, "no-contains": poLastArg, "merged": poLastArg, "no-merged": poLastArg, "points-at": poLastArg,
			"sort": poRequired, "format": poRequired, "color": poOptional, "column": poOptional,
			"annotate": poBad, "sign": poBad, "local-user": poBad, "force": poBad, "delete": poBad, "verify": poBad,
			"message": poBad, "file": poBad, "edit": poBad, "cleanup": poBad, "create-reflog": poBad, "trailer": poBad,
		},
		shortFlags: "li",
		shortOpt:   "n",
		listing:    "--list -l",
	}
}

// resolve finds the long option an option name (with "--", without "=…")
// stands for, as parse-options does: the exact name, a "no-" negation, or
// the only option it abbreviates. It reports false for unknown and
// ambiguous names.
func (po poSpec) resolve(name string) (string, poKind, bool) {
	n := strings.TrimPrefix(name, "--")
	if k, ok := po.long[n]; ok {
		return n, k, true
	}
	if base, neg := strings.CutPrefix(n, "no-"); neg {
		if k, ok := po.long[base]; ok && k != poBad {
			return n, poFlag, true // --no-sort and the like reset an option
		} else if ok {
			return n, poBad, true
		}
	}
	found, kind, count := "", poKind(0), 0
	for full, k := range po.long {
		if strings.HasPrefix(full, n) {
			found, kind = full, k
			count++
		}
	}
	if count != 1 || n == "" {
		return n, 0, false
	}
	return found, kind, true
}

// gitListOnly reports whether the words of git branch / git tag only list:
// options that list or filter, their values, and names only after --list.
func gitListOnly(rest []shWord, po poSpec) bool {
	list := false
	for i := 0; i < len(rest); i++ {
		t, ok := rest[i].lit()
		if !ok {
			if rest[i].mayBeFlag() || !list {
				return false
			}
			continue
		}
		switch {
		case t == "--":
			return list || i == len(rest)-1
		case strings.HasPrefix(t, "--"):
			name, _, eq := strings.Cut(t, "=")
			full, kind, ok := po.resolve(name)
			if !ok || kind == poBad {
				return false
			}
			switch kind {
			case poFlag:
				if eq {
					return false
				}
			case poRequired, poLastArg:
				if !eq && i+1 < len(rest) {
					i++
				} else if !eq && kind == poRequired {
					return false
				}
			}
			if strings.Contains(po.listing, "--"+full) {
				list = true
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for k := 1; k < len(t); k++ {
				c := t[k]
				switch {
				case strings.IndexByte(po.shortOpt, c) >= 0:
					if strings.Trim(t[k+1:], "0123456789") != "" {
						return false
					}
					k = len(t)
				case strings.IndexByte(po.shortFlags, c) >= 0:
					if c == 'l' {
						list = true
					}
				default:
					return false
				}
			}
		default:
			if !list {
				return false // a name: creates a branch or tag
			}
		}
	}
	return true
}

// gitRemoteReadOnly accepts git remote [-v], git remote get-url and git
// remote show -n (without -n, show asks the remote over the network).
func gitRemoteReadOnly(rest []shWord) bool {
	i := 0
	for i < len(rest) && (rest[i].is("-v") || rest[i].is("--verbose")) {
		i++
	}
	if i == len(rest) {
		return true
	}
	sub, _ := rest[i].lit()
	words := rest[i+1:]
	switch sub {
	case "get-url":
		for _, w := range words {
			t, ok := w.lit()
			if !ok || strings.HasPrefix(t, "-") && t != "--push" && t != "--all" {
				return false
			}
		}
		return true
	case "show":
		noQuery := false
		for _, w := range words {
			t, ok := w.lit()
			switch {
			case !ok && w.mayBeFlag():
				return false
			case t == "-n":
				noQuery = true
			case strings.HasPrefix(t, "-"):
				return false
			}
		}
		return noQuery
	}
	return false
}

var gitConfigOptsOnce lazy.Value[poSpec] // the value of gitConfigOpts, built at its first use

// gitConfigOpts returns the options of git config that only read or choose
// what to read.
func gitConfigOpts() poSpec { return gitConfigOptsOnce.Get(newGitConfigOpts) }

func newGitConfigOpts() poSpec {
	return poSpec{
		long: map[string]poKind{
			"get": poFlag, "get-all": poFlag, "get-regexp": poFlag, "get-urlmatch": poFlag, "list": poFlag,
			"get-color": poFlag, "get-colorbool": poFlag, "show-origin": poFlag, "show-scope": poFlag,
			"name-only": poFlag, "null": poFlag, "includes": poFlag, "no-includes": poFlag, "bool": poFlag,
			"int": poFlag, "bool-or-int": poFlag, "path": poFlag, "expiry-date": poFlag, "local": poFlag,
			"global": poFlag, "system": poFlag, "worktree": poFlag, "fixed-value": poFlag, "all": poFlag,
			"regexp": poFlag, "type": poRequired, "default": poRequired, "file": poRequired, "blob": poRequired,
			"value": poRequired, "url": poRequired,
			"add": poBad, "unset": poBad, "unset-all": poBad, "replace-all": poBad, "rename-section": poBad,
			"remove-section": poBad, "edit": poBad, "append": poBad, "comment": poBad,
		},
		shortFlags: "lz",
		shortReq:   "f",
	}
}

// gitConfigReadOnly accepts git config in its reading forms: an explicit
// get or list action (git config get/list, --get…, --list, -l) and no
// option that writes.
func gitConfigReadOnly(rest []shWord) bool {
	read := false
	for i := 0; i < len(rest); i++ {
		t, ok := rest[i].lit()
		if !ok {
			if rest[i].mayBeFlag() {
				return false
			}
			continue
		}
		switch {
		case i == 0 && (t == "get" || t == "list"):
			read = true
		case strings.HasPrefix(t, "--"):
			name, _, eq := strings.Cut(t, "=")
			full, kind, ok := gitConfigOpts().resolve(name)
			if !ok || kind == poBad || kind == poFlag && eq {
				return false
			}
			if strings.HasPrefix(full, "get") || full == "list" {
				read = true
			}
			if kind == poRequired && !eq {
				i++
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for k := 1; k < len(t); k++ {
				c := t[k]
				switch {
				case c == 'l':
					read = true
				case strings.IndexByte(gitConfigOpts().shortFlags, c) >= 0:
				case strings.IndexByte(gitConfigOpts().shortReq, c) >= 0:
					if k+1 == len(t) {
						i++
					}
					k = len(t)
				default:
					return false
				}
			}
		}
	}
	return read
}
