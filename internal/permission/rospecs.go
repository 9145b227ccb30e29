package permission

import "github.com/agentloop/agentloop/internal/lazy"

// Complete option tables (see argSpec) of read-only commands whose options
// include ones that write, run programs or name files to read: with the
// whole table, abbreviations resolve as the tool resolves them and an
// unknown option makes the command not read-only.

var dateSpecOnce lazy.Value[argSpec] // the value of dateSpec, built at its first use

func dateSpec() argSpec { return dateSpecOnce.Get(newDateSpec) }

func newDateSpec() argSpec {
	return argSpec{
		shortVal:   "dfrs",
		shortOpt:   "I",
		shortFlags: "uRh",
		longVal:    set("date", "file", "reference", "set", "rfc-3339", "resolution"),
		longOpt:    set("iso-8601"),
		longFlags:  set("debug", "rfc-email", "rfc-2822", "universal", "utc", "uct", "help", "version"),
	}
}

var sortSpecOnce lazy.Value[argSpec] // the value of sortSpec, built at its first use

func sortSpec() argSpec { return sortSpecOnce.Get(newSortSpec) }

func newSortSpec() argSpec {
	return argSpec{
		shortVal:   "kotTS",
		shortFlags: "bdfgiMhnRrVcCmsuz",
		longVal: set("key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program",
			"parallel", "batch-size", "sort", "random-source", "files0-from"),
		longOpt: set("check"),
		longFlags: set("ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort",
			"ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "reverse",
			"version-sort", "debug", "merge", "stable", "unique", "zero-terminated", "help", "version"),
	}
}

var diffSpecOnce lazy.Value[argSpec] // the value of diffSpec, built at its first use

func diffSpec() argSpec { return diffSpecOnce.Get(newDiffSpec) }

func newDiffSpec() argSpec {
	return argSpec{
		shortVal: "CUFIxXSDLW",
		longVal: set("ignore-matching-lines", "show-function-line", "exclude", "exclude-from", "starting-file", "ifdef",
			"label", "width", "tabsize", "from-file", "to-file", "horizon-lines", "palette", "old-line-format",
			"new-line-format", "unchanged-line-format", "line-format", "old-group-format", "new-group-format",
			"unchanged-group-format", "changed-group-format"),
		longOpt: set("color", "context", "unified"),
	}
}

// diffReadOnly: diff reads its operands, and a directory operand is
// compared file by file (recursively with -r): operands are read as whole
// trees. --from-file and --to-file name operands too; -X names a file of
// patterns.
func diffReadOnly(args []shWord) roResult {
	p := parseArgs(args, diffSpec())
	if p.unsure {
		return roResult{}
	}
	r := roResult{ok: true, reads: p.values("-X", "--exclude-from")}
	r.trees = append(r.trees, p.values("--from-file", "--to-file")...)
	for _, o := range p.operands {
		if !o.is("-") {
			r.trees = append(r.trees, o)
		}
	}
	return r
}
