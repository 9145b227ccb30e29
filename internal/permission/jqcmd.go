package permission

import (
	"regexp"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

var jqModuleOnce lazy.Value[*regexp.Regexp] // the value of jqModule, built at its first use

// jqModule matches the parts of a jq program that load files from jq's
// library search path (~/.jq, $ORIGIN/../lib/jq, -L dirs): import and
// include directives, and modulemeta, which reads a module's file.
func jqModule() *regexp.Regexp { return jqModuleOnce.Get(newJqModule) }

func newJqModule() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_$])(import|include|modulemeta|get_search_list)([^A-Za-z0-9_]|$)`)
}

// jqReadOnly accepts jq reading its input files and the files of --rawfile
// and --slurpfile. Programs that load modules (import, include,
// modulemeta, -L) are refused: the files they read cannot be named here;
// so are program files (-f), whose text is not seen here. After --args or --jsonargs the remaining operands
// are strings, not files, but they are judged as files all the same.
func jqReadOnly(args []shWord) roResult {
	noVal := set("-n", "-r", "-j", "-a", "-s", "-c", "-C", "-M", "-S", "-e", "-R", "--tab", "--seq", "--stream",
		"--stream-errors", "--slurp", "--raw-output", "--join-output", "--ascii-output", "--compact-output",
		"--color-output", "--monochrome-output", "--sort-keys", "--exit-status", "--raw-input", "--null-input",
		"--raw-output0", "--args", "--jsonargs", "-h", "--help", "-V", "--version", "--unbuffered", "-0", "--nul-output")
	var reads, operands []shWord

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
		case t == "--indent":
			i++
		case t == "-f" || t == "--from-file":
			return roResult{} // a program file may import modules, unseen here
		case t == "--arg" || t == "--argjson":
			i += 2
		case t == "--slurpfile" || t == "--rawfile":
			if i+2 >= len(args) {
				return roResult{}
			}
			reads = append(reads, args[i+2])
			i += 2
		case len(t) > 2 && t[1] != '-' && strings.Trim(t[1:], "nrjascCMSeR") == "":
			// a cluster of short options without a value
		default:
			return roResult{} // -L, --library-path and anything unknown
		}
	}
	if len(operands) == 0 {
		return roResult{ok: true} // jq with no program prints its usage
	}
	program, ok := operands[0].lit()
	if !ok || jqModule().MatchString(program) {
		return roResult{}
	}
	operands = operands[1:]
	for _, o := range operands {
		if !o.is("-") {
			reads = append(reads, o)
		}
	}
	return roResult{ok: true, reads: reads}
}
