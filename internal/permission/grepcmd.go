package permission

import "github.com/agentloop/agentloop/internal/lazy"

var grepSpecOnce lazy.Value[argSpec] // the value of grepSpec, built at its first use

// grepSpec returns GNU grep's complete option table.
func grepSpec() argSpec { return grepSpecOnce.Get(newGrepSpec) }

func newGrepSpec() argSpec {
	return argSpec{
		shortVal:   "efmABCdD",
		shortFlags: "EFGPiywxzsvVbnHhoqaIrRlLcTZUu0123456789",
		longVal: set("regexp", "file", "max-count", "after-context", "before-context", "context", "directories",
			"devices()", "label", "exclude", "include", "exclude-dir", "exclude-from", "binary-files", "group-separator"),
		longOpt: set("color", "colour"),
		longFlags: set("extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "ignore-case",
			"no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages", "invert-match", "version",
			"help", "byte-offset", "line-number", "no-line-number", "line-buffered", "with-filename", "no-filename",
			"only-matching", "quiet", "silent", "binary", "text", "recursive", "dereference-recursive",
			"files-without-match", "files-with-matches", "count", "initial-tab", "null", "no-group-separator",
			"unix-byte-offsets"),
	}
}

// grepReadOnly accepts grep reading its file operands (whole trees with
// -r or -d recurse, the working directory when it has none), the pattern
// files of -f and the lists of --exclude-from. It refuses -R (it follows
// links out of the tree), options it does not know, and words that could
// turn into options when they run (a -r or -f could hide there).
func grepReadOnly(args []shWord) roResult {
	p := parseArgs(args, grepSpec())
	if p.unsure || p.unknown || p.has("-R", "--dereference-recursive") {
		return roResult{}
	}
	files := p.operands
	if !p.has("-e", "--regexp", "-f", "--file") {
		if len(files) == 0 {
			return roResult{} // no pattern: an error
		}
		files = files[1:] // the first operand is the pattern
	}
	var named []shWord
	for _, f := range files {
		if !f.is("-") {
			named = append(named, f)
		}
	}
	r := roResult{ok: true, reads: append(p.values("-f", "--file"), p.values("--exclude-from")...)}
	recursive := p.has("-r", "--recursive")
	for _, v := range p.values("-d", "--directories") {
		if t, ok := v.lit(); !ok || t != "read" && t != "skip" {
			recursive = true
		}
	}
	if recursive {
		r.trees = named
		r.treeCwd = len(files) == 0
	} else {
		r.reads = append(r.reads, named...)
	}
	return r
}

var rgSpecOnce lazy.Value[argSpec] // the value of rgSpec, built at its first use

func rgSpec() argSpec { return rgSpecOnce.Get(newRgSpec) }

func newRgSpec() argSpec {
	return argSpec{shortVal: "ABCEefgjMmTtdr", longVal: set("regexp", "file", "glob", "iglob", "type",
		"type-not", "type-add", "type-clear", "max-count", "max-depth", "after-context", "before-context",
		"context", "encoding", "threads", "max-columns", "replace", "colors", "color", "context-separator",
		"field-context-separator", "field-match-separator", "path-separator", "sort", "sortr", "engine",
		"max-filesize", "dfa-size-limit", "regex-size-limit", "ignore-file", "pre", "pre-glob",
		"hostname-bin", "hyperlink-format", "generate")}
}

// rgReadOnly accepts ripgrep, which searches directories whole: its path
// operands (or the working directory) are read as trees.
func rgReadOnly(args []shWord) roResult {
	p := parseArgs(args, rgSpec())
	if p.unsure || p.hasBad("--pre", "--pre-glob", "--hostname-bin", "-L", "--follow") {
		return roResult{}
	}
	files := p.operands
	if !p.has("-e", "--regexp", "-f", "--file", "--files", "--type-list") && len(files) > 0 {
		files = files[1:]
	}
	return roResult{ok: true, reads: p.values("-f", "--file", "--ignore-file"), trees: files, treeCwd: len(files) == 0}
}
