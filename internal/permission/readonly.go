package permission

import "strings"

// roResult is what a read-only check found out about a command.
type roResult struct {
	ok       bool     // the command only reads and prints
	reads    []shWord // files and directories it reads
	readsCwd bool     // it reads the working directory itself
}

type roFunc func(args []shWord) roResult

var yes = roResult{ok: true}

// readOnlyCommands are the commands that run without a rule in every mode
// (the reference's built-in read-only set, and a few more of the same
// kind). Each check is conservative: an option that can write a file or
// run a program, or a word that cannot be known where such an option could
// stand, makes the command not read-only.
var readOnlyCommands map[string]roFunc

func init() {
	plain := func(args []shWord) roResult { return yes }
	readOnlyCommands = map[string]roFunc{
		"echo": plain, "pwd": plain, "true": plain, "false": plain, ":": plain, "whoami": plain,
		"id": plain, "groups": plain, "uname": plain, "nproc": plain, "arch": plain, "tty": plain,
		"uptime": plain, "basename": plain, "dirname": plain, "seq": plain, "sleep": plain,
		"which": plain, "type": plain, "printenv": plain, "locale": plain, "cal": plain,
		"expr": plain, "tr": plain, "cd": plain,
		"printf": func(args []shWord) roResult {
			if len(args) == 0 {
				return yes
			}
			t, ok := args[0].lit()
			return roResult{ok: ok && !strings.HasPrefix(t, "-v")}
		},
		"hostname": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{})
			return roResult{ok: len(p.operands) == 0 && !p.unsure && !p.hasBad("-F", "--file", "-b", "--boot")}
		},
		"date": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{shortVal: "dsrfI", longVal: set("date", "set", "reference", "file")})
			if p.unsure || p.hasBad("-s", "--set", "-f", "--file") {
				return roResult{}
			}
			return roResult{ok: true, reads: p.values("-r", "--reference")}
		},
		"env": func(args []shWord) roResult { return roResult{ok: len(args) == 0} },
		"tee": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{})
			return roResult{ok: len(p.operands) == 0 && !p.unsure}
		},
		"exec": func(args []shWord) roResult { return roResult{ok: len(args) == 0} },
		"set":  func(args []shWord) roResult { return roResult{ok: setHarmless(args)} },
		"read": func(args []shWord) roResult { return roResult{ok: readHarmless(args)} },
		"command": func(args []shWord) roResult {
			return roResult{ok: len(args) > 0 && (args[0].is("-v") || args[0].is("-V"))}
		},
		"test": testReadOnly(false),
		"[":    testReadOnly(true),

		"cat":  paths(argSpec{}, false, false),
		"head": paths(argSpec{shortVal: "nc", longVal: set("lines", "bytes")}, false, false),
		"tail": paths(argSpec{shortVal: "ncs", longVal: set("lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats")}, false, false),
		"wc":   paths(argSpec{}, false, false, "--files0-from"),
		"ls": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{shortVal: "ITw", longVal: set("ignore", "hide", "tabsize", "width", "format", "sort", "time", "time-style", "block-size", "quoting-style", "indicator-style")})
			if p.has("-R", "--recursive") && p.has("-L", "--dereference") {
				return roResult{} // would follow links out of the tree
			}
			return paths(argSpec{shortVal: "ITw"}, true, false)(args)
		},
		"stat":      paths(argSpec{shortVal: "c", longVal: set("format", "printf")}, false, false),
		"file":      pathsReading(argSpec{shortVal: "emFP", longVal: set("magic-file", "exclude", "exclude-quiet", "separator", "parameter")}, false, true, []string{"-m", "--magic-file"}, "-C", "--compile", "-f", "--files-from"),
		"du":        pathsReading(argSpec{shortVal: "dBtX", longVal: set("max-depth", "block-size", "threshold", "exclude", "exclude-from", "time-style")}, true, false, []string{"-X", "--exclude-from"}, "--files0-from", "-L", "--dereference"),
		"df":        paths(argSpec{shortVal: "Btx", longVal: set("block-size", "type", "exclude-type")}, false, false),
		"tree":      paths(argSpec{shortVal: "LPIHT", longVal: set("charset", "filelimit", "timefmt", "sort")}, true, true, "-o", "-l", "--fromfile"),
		"realpath":  paths(argSpec{longVal: set("relative-to", "relative-base")}, false, false),
		"readlink":  paths(argSpec{}, false, false),
		"nl":        paths(argSpec{shortVal: "bdfhilnsvw"}, false, false),
		"tac":       paths(argSpec{shortVal: "s", longVal: set("separator")}, false, false),
		"cut":       paths(argSpec{shortVal: "bcdf", longVal: set("bytes", "characters", "delimiter", "fields", "output-delimiter")}, false, false),
		"paste":     paths(argSpec{shortVal: "d", longVal: set("delimiters")}, false, false),
		"comm":      paths(argSpec{longVal: set("output-delimiter")}, false, false),
		"join":      paths(argSpec{shortVal: "aejotv12"}, false, false),
		"cmp":       paths(argSpec{shortVal: "in", longVal: set("ignore-initial", "bytes")}, false, false),
		"diff":      pathsReading(argSpec{shortVal: "CUFIxXSDLW", longVal: set("ignore-matching-lines", "show-function-line", "exclude", "exclude-from", "starting-file", "ifdef", "label", "width", "tabsize", "from-file", "to-file", "horizon-lines", "palette")}, false, false, []string{"-X", "--exclude-from", "--from-file", "--to-file"}),
		"md5sum":    paths(argSpec{}, false, false),
		"sha1sum":   paths(argSpec{}, false, false),
		"sha224sum": paths(argSpec{}, false, false),
		"sha256sum": paths(argSpec{}, false, false),
		"sha384sum": paths(argSpec{}, false, false),
		"sha512sum": paths(argSpec{}, false, false),
		"b2sum":     paths(argSpec{}, false, false),
		"cksum":     paths(argSpec{}, false, false),
		"strings":   paths(argSpec{shortVal: "ntTes", longVal: set("bytes", "radix", "encoding", "target", "output-separator")}, false, false),
		"od":        paths(argSpec{shortVal: "AjNtwS", longVal: set("address-radix", "skip-bytes", "read-bytes", "format", "endian")}, false, false),
		"hexdump":   pathsReading(argSpec{shortVal: "efns"}, false, false, []string{"-f"}),
		"base64":    paths(argSpec{shortVal: "w", longVal: set("wrap")}, false, false),
		"base32":    paths(argSpec{shortVal: "w", longVal: set("wrap")}, false, false),
		"fold":      paths(argSpec{shortVal: "w", longVal: set("width")}, false, false),
		"fmt":       paths(argSpec{shortVal: "wpg", longVal: set("width", "prefix", "goal")}, false, false),
		"rev":       paths(argSpec{}, false, false),
		"expand":    paths(argSpec{shortVal: "t", longVal: set("tabs")}, false, false),
		"unexpand":  paths(argSpec{shortVal: "t", longVal: set("tabs")}, false, false),
		"sort": pathsReading(argSpec{shortVal: "kotTS", longVal: set("key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program", "parallel", "batch-size", "sort", "random-source")},
			false, true, []string{"--random-source"}, "-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from"),
		"uniq": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{shortVal: "fsw", longVal: set("skip-fields", "skip-chars", "check-chars")})
			if len(p.operands) > 1 || p.unsure { // a second operand is the output file
				return roResult{}
			}
			return roResult{ok: true, reads: p.operands}
		},
		"grep":  grepReadOnly,
		"egrep": grepReadOnly,
		"fgrep": grepReadOnly,
		"rg":    rgReadOnly,
		"jq":    jqReadOnly,
		"find":  findReadOnly,
		"git":   gitReadOnly,
		"sed":   sedReadOnly,
	}
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// paths builds the check for a command whose operands are all files it
// reads. cwdDefault: with no operand it reads the working directory.
// strict: a word that cannot be known where an option could stand makes it
// not read-only (for commands that have options that write or run). bad
// lists the options that write or run.
func paths(spec argSpec, cwdDefault, strict bool, bad ...string) roFunc {
	return pathsReading(spec, cwdDefault, strict, nil, bad...)
}

// pathsReading is paths for commands with options whose values are files
// they read as well.
func pathsReading(spec argSpec, cwdDefault, strict bool, readVals []string, bad ...string) roFunc {
	return func(args []shWord) roResult {
		p := parseArgs(args, spec)
		if strict && p.unsure || p.hasBad(bad...) {
			return roResult{}
		}
		reads := p.values(readVals...)
		for _, o := range p.operands {
			if !o.is("-") {
				reads = append(reads, o)
			}
		}
		return roResult{ok: true, reads: reads, readsCwd: cwdDefault && len(p.operands) == 0}
	}
}

// testReadOnly checks test and [. Bash's test -v and -R evaluate array
// subscripts, which can run commands, so they are excluded, and so are
// words that could turn into them.
func testReadOnly(bracket bool) roFunc {
	return func(args []shWord) roResult {
		if bracket {
			if len(args) == 0 || !args[len(args)-1].is("]") {
				return roResult{}
			}
			args = args[:len(args)-1]
		}
		for _, a := range args {
			if a.is("-v") || a.is("-R") || a.split {
				return roResult{}
			}
		}
		known := func(i int) bool { return args[i].kind == wordLiteral }
		switch n := len(args); {
		case n <= 1:
			return yes
		case n == 2:
			return roResult{ok: known(0)}
		case n == 3:
			if known(1) && isBinaryTestOp(args[1].text) || known(0) && args[0].text == "!" {
				return yes
			}
			return roResult{}
		default:
			for i := range args {
				if !known(i) {
					return roResult{}
				}
			}
			return yes
		}
	}
}

func isBinaryTestOp(s string) bool {
	switch s {
	case "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o":
		return true
	}
	return false
}

var grepSpec = argSpec{shortVal: "efmABCdD", longVal: set("regexp", "file", "max-count", "after-context",
	"before-context", "context", "directories", "devices", "label", "exclude", "include", "exclude-dir",
	"exclude-from", "binary-files", "group-separator")}

func grepReadOnly(args []shWord) roResult {
	p := parseArgs(args, grepSpec)
	if p.has("-R", "--dereference-recursive") || p.unsure && !p.has("-e", "--regexp", "-f", "--file") && len(p.operands) == 0 {
		return roResult{} // -R follows links out of the tree
	}
	files := p.operands
	if !p.has("-e", "--regexp", "-f", "--file") && len(files) > 0 {
		files = files[1:] // the first operand is the pattern
	}
	r := roResult{ok: true, reads: append(files, p.values("-f", "--file", "--exclude-from")...)}
	recursive := p.has("-r", "--recursive")
	for _, v := range p.values("-d", "--directories") {
		if t, ok := v.lit(); !ok || t != "read" && t != "skip" {
			recursive = true
		}
	}
	r.readsCwd = len(files) == 0 && recursive
	return r
}

var rgSpec = argSpec{shortVal: "ABCEefgjMmTtdr", longVal: set("regexp", "file", "glob", "iglob", "type",
	"type-not", "type-add", "type-clear", "max-count", "max-depth", "after-context", "before-context",
	"context", "encoding", "threads", "max-columns", "replace", "colors", "color", "context-separator",
	"field-context-separator", "field-match-separator", "path-separator", "sort", "sortr", "engine",
	"max-filesize", "dfa-size-limit", "regex-size-limit", "ignore-file", "pre", "pre-glob",
	"hostname-bin", "hyperlink-format", "generate")}

func rgReadOnly(args []shWord) roResult {
	p := parseArgs(args, rgSpec)
	if p.unsure || p.hasBad("--pre", "--pre-glob", "--hostname-bin", "-L", "--follow") {
		return roResult{}
	}
	files := p.operands
	if !p.has("-e", "--regexp", "-f", "--file", "--files", "--type-list") && len(files) > 0 {
		files = files[1:]
	}
	return roResult{ok: true, reads: append(files, p.values("-f", "--file", "--ignore-file")...), readsCwd: len(files) == 0}
}

func jqReadOnly(args []shWord) roResult {
	noVal := set("-n", "-r", "-j", "-a", "-s", "-c", "-C", "-M", "-S", "-e", "-R", "--tab", "--seq", "--stream",
		"--stream-errors", "--slurp", "--raw-output", "--join-output", "--ascii-output", "--compact-output",
		"--color-output", "--monochrome-output", "--sort-keys", "--exit-status", "--raw-input", "--null-input",
		"--raw-output0", "--args", "--jsonargs", "-h", "--help", "-V", "--version")
	var reads, operands []shWord
	hasFilterFile := false
	for i := 0; i < len(args); i++ {
		t, ok := args[i].lit()
		switch {
		case !ok:
			if args[i].mayBeFlag() {
				return roResult{}
			}
			operands = append(operands, args[i])
		case t == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case !strings.HasPrefix(t, "-") || t == "-":
			operands = append(operands, args[i])
		case noVal[t]:
		case t == "--indent" || t == "-L":
			i++
		case t == "-f" || t == "--from-file":
			if i+1 < len(args) {
				reads = append(reads, args[i+1])
			}
			hasFilterFile = true
			i++
		case t == "--arg" || t == "--argjson":
			i += 2
		case t == "--slurpfile" || t == "--rawfile":
			if i+2 < len(args) {
				reads = append(reads, args[i+2])
			}
			i += 2
		default:
			return roResult{}
		}
	}
	if !hasFilterFile && len(operands) > 0 {
		operands = operands[1:]
	}
	for _, o := range operands {
		if !o.is("-") {
			reads = append(reads, o)
		}
	}
	return roResult{ok: true, reads: reads}
}

// findReadOnly accepts find without the actions that run commands, delete
// or write files.
func findReadOnly(args []shWord) roResult {
	i := 0
	for i < len(args) && (args[i].is("-H") || args[i].is("-P")) {
		i++
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
		t, _ := w.lit()
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L", "-follow":
			return roResult{} // runs, writes, or follows links out of the tree
		}
	}
	return roResult{ok: true, reads: starts, readsCwd: len(starts) == 0}
}

// gitReadOnly accepts the git subcommands that only look at the
// repository.
func gitReadOnly(args []shWord) roResult {
	var reads []shWord
	i := 0
globals:
	for ; i < len(args); i++ {
		t, ok := args[i].lit()
		if !ok {
			return roResult{}
		}
		switch {
		case t == "--no-pager" || t == "-P" || t == "--no-optional-locks" || t == "--literal-pathspecs" ||
			t == "--no-replace-objects" || t == "--version" || t == "-p" || t == "--paginate":
			continue
		case t == "-C":
			if i+1 >= len(args) {
				return roResult{}
			}
			reads = append(reads, args[i+1])
			i++
			continue
		case strings.HasPrefix(t, "-"):
			return roResult{} // -c, --git-dir, --work-tree, --exec-path, --config-env, …
		}
		break globals
	}
	if i >= len(args) {
		return roResult{ok: true, reads: reads}
	}
	sub := args[i].text
	rest := args[i+1:]
	for _, w := range rest {
		t, ok := w.lit()
		if !ok && w.mayBeFlag() {
			return roResult{}
		}
		name, _, _ := strings.Cut(t, "=")
		abbrev := func(full string) bool { return len(name) > 2 && strings.HasPrefix(full, name) }
		if strings.HasPrefix(t, "--output") || abbrev("--output") || abbrev("--ext-diff") || abbrev("--no-index") ||
			sub == "grep" && (strings.HasPrefix(t, "-O") || abbrev("--open-files-in-pager")) {
			return roResult{}
		}
	}
	first := ""
	if len(rest) > 0 {
		first, _ = rest[0].lit()
	}
	ok := false
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "describe", "shortlog",
		"cat-file", "rev-list", "merge-base", "show-ref", "name-rev", "for-each-ref", "count-objects", "grep",
		"whatchanged", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr", "version", "annotate":
		ok = true
	case "branch":
		ok = listOnly(rest, set("-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list",
			"--show-current", "-i", "--ignore-case", "--no-color", "--no-column", "--omit-empty"),
			set("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--color", "--column", "--abbrev"))
	case "tag":
		ok = listOnly(rest, set("-l", "--list", "-i", "--ignore-case", "--no-color", "--no-column", "--omit-empty"),
			set("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--color", "--column", "-n"))
	case "remote":
		ok = len(rest) == 0 || first == "-v" || first == "--verbose" || first == "show" || first == "get-url"
	case "config":
		write := false
		read := first == "get" || first == "list"
		for _, w := range rest {
			switch w.text {
			case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool":
				read = true
			case "--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit":
				write = true
			}
		}
		ok = read && !write
	case "stash":
		ok = first == "list" || first == "show"
	case "worktree":
		ok = first == "list"
	case "reflog":
		ok = len(rest) == 0 || first == "show" || strings.HasPrefix(first, "-")
	}
	return roResult{ok: ok, reads: reads, readsCwd: true}
}

// listOnly reports whether the words of git branch / git tag only list:
// options from flags or valued (value attached or next), and names only
// after --list.
func listOnly(rest []shWord, flags, valued map[string]bool) bool {
	list := false
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		name, _, eq := strings.Cut(t, "=")
		switch {
		case flags[t]:
			if t == "-l" || t == "--list" {
				list = true
			}
		case valued[name] && eq:
		case valued[t]:
			i++
		case strings.HasPrefix(t, "-n") && len(t) > 2 && strings.Trim(t[2:], "0123456789") == "":
		case !strings.HasPrefix(t, "-") && list:
		default:
			return false
		}
	}
	return true
}

// sedReadOnly accepts sed printing to standard output with a script that
// neither writes files (w, W, s///w), reads others (r, R) nor runs
// commands (e, s///e).
func sedReadOnly(args []shWord) roResult {
	s, ok := parseSed(args)
	if !ok || s.inPlace {
		return roResult{}
	}
	return roResult{ok: true, reads: s.files}
}

// baseName is the command name used to look a command up in the tables:
// the word itself, which must be a bare name (a path such as ./ls or
// /bin/ls is not the system's command).
func baseName(w shWord) (string, bool) {
	t, ok := w.lit()
	if !ok || t == "" || strings.Contains(t, "/") {
		return "", false
	}
	return t, true
}

// readOnlyCheck runs the read-only check on an allow form.
func readOnlyCheck(form []shWord) roResult {
	name, ok := baseName(form[0])
	if !ok {
		return roResult{}
	}
	f := readOnlyCommands[name]
	if f == nil {
		return roResult{}
	}
	return f(form[1:])
}
