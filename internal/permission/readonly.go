package permission

import (
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// roResult is what a read-only check found out about a command.
type roResult struct {
	ok       bool     // the command only reads and prints
	reads    []shWord // files and directories it reads
	readsCwd bool     // it reads the working directory itself
	// trees are directories it reads whole, every file below them
	// (grep -r, diff -r): a deny or ask rule on anything below one
	// applies. treeCwd: it reads the working directory so.
	trees   []shWord
	treeCwd bool
}

type roFunc func(args []shWord) roResult

var yes = roResult{ok: true}

var readOnlyCommandsOnce lazy.Value[map[string]roFunc] // the value of readOnlyCommands, built at its first use

// readOnlyCommands returns the commands that run without a rule in every mode
// (the reference's built-in read-only set, and a few more of the same
// kind). Each check is conservative: an option that can write a file or
// run a program, or a word that cannot be known where such an option could
// stand, makes the command not read-only.
// The table is built when first needed, not at start-up by every process.
func readOnlyCommands() map[string]roFunc { return readOnlyCommandsOnce.Get(newReadOnlyCommands) }

func newReadOnlyCommands() map[string]roFunc {
	plain := func(args []shWord) roResult { return yes }
	return map[string]roFunc{
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
			p := parseArgs(args, dateSpec())
			if p.unsure || p.unknown || p.hasBad("-s", "--set", "-f", "--file") {
				return roResult{}
			}
			for _, o := range p.operands {
				if t, ok := o.lit(); !ok || !strings.HasPrefix(t, "+") {
					return roResult{} // date MMDDhhmm sets the clock
				}
			}
			return roResult{ok: true, reads: p.values("-r", "--reference")}
		},
		"env": func(args []shWord) roResult { return roResult{ok: len(args) == 0} },
		"tee": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{longOpt: set("output-error")})
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
		"tail": paths(argSpec{shortVal: "ncs", longVal: set("lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"), longOpt: set("follow")}, false, false),
		"wc":   paths(argSpec{}, false, false, "--files0-from"),
		"ls": func(args []shWord) roResult {
			spec := argSpec{shortVal: "ITw", longVal: set("ignore", "hide", "tabsize", "width", "format", "sort", "time", "time-style", "block-size", "quoting-style", "indicator-style"),
				longOpt: set("color", "hyperlink", "classify", "full-time")}
			p := parseArgs(args, spec)
			if p.has("-R", "--recursive") && p.has("-L", "--dereference") {
				return roResult{} // would follow links out of the tree
			}
			return paths(spec, true, false)(args)
		},
		"stat":      paths(argSpec{shortVal: "c", longVal: set("format", "printf")}, false, false),
		"file":      pathsReading(argSpec{shortVal: "emFP", longVal: set("magic-file", "exclude", "exclude-quiet", "separator", "parameter")}, false, true, []string{"-m", "--magic-file"}, "-C", "--compile", "-f", "--files-from"),
		"du":        pathsReading(argSpec{shortVal: "dBtX", longVal: set("max-depth", "block-size", "threshold", "exclude", "exclude-from", "time-style"), longOpt: set("time")}, true, false, []string{"-X", "--exclude-from"}, "--files0-from", "-L", "--dereference"),
		"df":        paths(argSpec{shortVal: "Btx", longVal: set("block-size", "type", "exclude-type"), longOpt: set("output")}, false, false),
		"tree":      paths(argSpec{shortVal: "LPIHTo", longVal: set("charset", "filelimit", "timefmt", "sort", "infofile", "gitfile", "hintro", "houtro")}, true, true, "-o", "-R", "-l", "--fromfile", "--fromtabfile", "--infofile", "--gitfile", "--hintro", "--houtro"),
		"realpath":  paths(argSpec{longVal: set("relative-to", "relative-base")}, false, false),
		"readlink":  paths(argSpec{}, false, false),
		"nl":        paths(argSpec{shortVal: "bdfhilnsvw"}, false, false),
		"tac":       paths(argSpec{shortVal: "s", longVal: set("separator")}, false, false),
		"cut":       paths(argSpec{shortVal: "bcdf", longVal: set("bytes", "characters", "delimiter", "fields", "output-delimiter")}, false, false),
		"paste":     paths(argSpec{shortVal: "d", longVal: set("delimiters")}, false, false),
		"comm":      paths(argSpec{longVal: set("output-delimiter")}, false, false),
		"join":      paths(argSpec{shortVal: "aejotv12"}, false, false),
		"cmp":       paths(argSpec{shortVal: "in", longVal: set("ignore-initial", "bytes")}, false, false),
		"diff":      diffReadOnly,
		"md5sum":    paths(argSpec{}, false, false, "-c", "--check"),
		"sha1sum":   paths(argSpec{}, false, false, "-c", "--check"),
		"sha224sum": paths(argSpec{}, false, false, "-c", "--check"),
		"sha256sum": paths(argSpec{}, false, false, "-c", "--check"),
		"sha384sum": paths(argSpec{}, false, false, "-c", "--check"),
		"sha512sum": paths(argSpec{}, false, false, "-c", "--check"),
		"b2sum":     paths(argSpec{shortVal: "l", longVal: set("length")}, false, false, "-c", "--check"),
		"cksum":     paths(argSpec{shortVal: "al", longVal: set("algorithm", "length")}, false, false, "-c", "--check"),
		"strings":   paths(argSpec{shortVal: "ntTes", longVal: set("bytes", "radix", "encoding", "target", "output-separator")}, false, false),
		"od":        paths(argSpec{shortVal: "AjNtwS", longVal: set("address-radix", "skip-bytes", "read-bytes", "format", "endian"), longOpt: set("strings", "width")}, false, false),
		"hexdump":   pathsReading(argSpec{shortVal: "efns"}, false, false, []string{"-f"}),
		"base64":    paths(argSpec{shortVal: "w", longVal: set("wrap")}, false, false),
		"base32":    paths(argSpec{shortVal: "w", longVal: set("wrap")}, false, false),
		"fold":      paths(argSpec{shortVal: "w", longVal: set("width")}, false, false),
		"fmt":       paths(argSpec{shortVal: "wpg", longVal: set("width", "prefix", "goal")}, false, false),
		"rev":       paths(argSpec{}, false, false),
		"expand":    paths(argSpec{shortVal: "t", longVal: set("tabs")}, false, false),
		"unexpand":  paths(argSpec{shortVal: "t", longVal: set("tabs")}, false, false),
		"sort":      pathsReading(sortSpec(), false, true, []string{"--random-source"}, "-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from"),
		"uniq": func(args []shWord) roResult {
			p := parseArgs(args, argSpec{shortVal: "fsw", longVal: set("skip-fields", "skip-chars", "check-chars"), longOpt: set("all-repeated", "group")})
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
		if strict && p.unsure || p.unknown || p.hasBad(bad...) {
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
	f := readOnlyCommands()[name]
	if f == nil {
		return roResult{}
	}
	return f(form[1:])
}
