package permission

import (
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// wrapperSpec describes the options of a command that runs another
// command given after them.
type wrapperSpec struct {
	noVal    []string          // options without a value
	withVal  []string          // options followed by a value word
	attached []string          // prefixes of options with the value attached
	flagOK   func(string) bool // other acceptable options
	skip     int               // words after the options that belong to the wrapper
	skipOK   func(string) bool // check of those words
}

var strippableOnce lazy.Value[map[string]wrapperSpec] // the value of strippable, built at its first use

// strippable lists the wrappers the reference strips before matching an
// allow rule: what they run is what must be allowed.
func strippable() map[string]wrapperSpec { return strippableOnce.Get(newStrippable) }

func newStrippable() map[string]wrapperSpec {
	return map[string]wrapperSpec{
		"timeout": {
			noVal:    []string{"--preserve-status", "--foreground", "-v", "--verbose"},
			withVal:  []string{"-s", "-k", "--signal", "--kill-after"},
			attached: []string{"--signal=", "--kill-after=", "-s", "-k"},
			skip:     1, skipOK: isDuration,
		},
		"time": {
			noVal:    []string{"-p", "-v", "--verbose", "-q", "--quiet", "--portability"},
			withVal:  []string{"-f", "--format"},
			attached: []string{"--format=", "-f"},
		},
		"nice": {
			withVal:  []string{"-n", "--adjustment"},
			attached: []string{"--adjustment=", "-n"},
			flagOK:   func(s string) bool { return len(s) > 1 && strings.Trim(s[1:], "0123456789") == "" },
		},
		"nohup": {},
		"stdbuf": {
			withVal:  []string{"-i", "-o", "-e", "--input", "--output", "--error"},
			attached: []string{"-i", "-o", "-e", "--input=", "--output=", "--error="},
		},
		"command": {noVal: []string{"-p"}},
		"builtin": {},
		"noglob":  {},
		"exec":    {noVal: []string{"-c", "-l"}, withVal: []string{"-a"}},
	}
}

var runsOthersOnce lazy.Value[map[string]bool] // the value of runsOthers, built at its first use

// runsOthers lists commands that run a command given in their arguments.
// Deny and ask rules are matched against every tail of their words, and
// allow rules with wildcards never approve them (the reference's "exec
// wrappers are never prefix-approved"); an exact rule still can.
func runsOthers() map[string]bool { return runsOthersOnce.Get(newRunsOthers) }

func newRunsOthers() map[string]bool {
	return map[string]bool{
		"timeout": true, "time": true, "nice": true, "nohup": true, "stdbuf": true, "command": true,
		"builtin": true, "noglob": true, "exec": true, "xargs": true, "env": true, "sudo": true, "doas": true,
		"su": true, "runuser": true, "chroot": true, "unshare": true, "nsenter": true, "setsid": true,
		"ionice": true, "flock": true, "watch": true, "chrt": true, "taskset": true, "strace": true,
		"ltrace": true, "parallel": true, "script": true, "caffeinate": true, "systemd-run": true,
		"eval": true, "bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "fish": true,
		"busybox": true, "firejail": true, "proot": true, "fakeroot": true, "pkexec": true, "expect": true,
		"catchsegv": true, "valgrind": true, "gdb": true, "setpriv": true, "prlimit": true, "chpst": true,
	}
}

func isDuration(s string) bool {
	s = strings.TrimRight(s, "smhd")
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

// stripOne removes one wrapper from the front of args.
func stripOne(args []shWord) ([]shWord, bool) {
	if len(args) == 0 {
		return nil, false
	}
	name, ok := args[0].lit()
	if !ok {
		return nil, false
	}
	if name == "xargs" {
		// Only bare xargs is stripped; it appends words read from its
		// input to the command, so the form ends with an unknown word.
		rest := args[1:]
		if len(rest) > 0 && rest[0].mayBeFlag() {
			return nil, false
		}
		if len(rest) == 0 {
			rest = []shWord{{kind: wordLiteral, text: "echo", safe: true}}
		}
		return append(append([]shWord(nil), rest...), shWord{kind: wordUnknown, split: true}), true
	}
	spec, ok := strippable()[name]
	if !ok {
		return nil, false
	}
	if name == "command" && len(args) > 1 && (args[1].is("-v") || args[1].is("-V")) {
		return nil, false
	}
	i := 1
options:
	for i < len(args) {
		t, ok := args[i].lit()
		if !ok {
			if args[i].mayBeFlag() {
				return nil, false
			}
			break
		}
		switch {
		case t == "--":
			i++
			break options
		case !strings.HasPrefix(t, "-") || t == "-":
			break options
		case contains(spec.noVal, t):
			i++
		case contains(spec.withVal, t):
			i += 2
		case hasAnyPrefix(t, spec.attached):
			i++
		case spec.flagOK != nil && spec.flagOK(t):
			i++
		default:
			return nil, false
		}
	}
	for n := 0; n < spec.skip; n++ {
		if i >= len(args) {
			return nil, false
		}
		t, ok := args[i].lit()
		if !ok || spec.skipOK != nil && !spec.skipOK(t) {
			return nil, false
		}
		i++
	}
	if i >= len(args) {
		return nil, false
	}
	return args[i:], true
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return true
		}
	}
	return false
}

// allowForm strips the wrappers in front of a command, as the reference
// does before matching allow rules, and reports whether it stripped any.
func allowForm(args []shWord) ([]shWord, bool) {
	stripped := false
	for n := 0; n < 8; n++ {
		rest, ok := stripOne(args)
		if !ok {
			break
		}
		args, stripped = rest, true
	}
	return args, stripped
}

// denyForms lists the word lists a deny or ask rule is matched against:
// the command itself, each stage of wrapper stripping, every tail of a
// command that runs others, the commands of find -exec, and each of these
// with a path-qualified command name reduced to its base name.
func denyForms(args []shWord) [][]shWord {
	forms := [][]shWord{args}
	cur := args
	for n := 0; n < 8; n++ {
		rest, ok := stripOne(cur)
		if !ok {
			break
		}
		forms = append(forms, rest)
		cur = rest
	}
	if name, ok := args[0].lit(); ok && runsOthers()[filepath.Base(name)] &&
		!(name == "command" && len(args) > 1 && (args[1].is("-v") || args[1].is("-V"))) {
		for i := 1; i < len(args) && i < 24; i++ {
			forms = append(forms, args[i:])
		}
	}
	for _, f := range append([][]shWord(nil), forms...) {
		forms = append(forms, findExecs(f)...)
	}
	for _, f := range append([][]shWord(nil), forms...) {
		if name, ok := f[0].lit(); ok && strings.Contains(name, "/") && filepath.Base(name) != name {
			g := append([]shWord{{kind: wordLiteral, text: filepath.Base(name), safe: safeText(filepath.Base(name), false)}}, f[1:]...)
			forms = append(forms, g)
		}
	}
	return forms
}

// findExecs returns the commands a find runs with -exec, -execdir, -ok
// and -okdir.
func findExecs(args []shWord) [][]shWord {
	if name, ok := args[0].lit(); !ok || filepath.Base(name) != "find" {
		return nil
	}
	var out [][]shWord
	for i := 1; i < len(args); i++ {
		if !isFindExec(args[i]) {
			continue
		}
		j := i + 1
		for j < len(args) && !args[j].is(";") && !args[j].is("+") {
			j++
		}
		if j > i+1 {
			out = append(out, args[i+1:j])
		}
		i = j
	}
	return out
}

func isFindExec(w shWord) bool {
	return w.is("-exec") || w.is("-execdir") || w.is("-ok") || w.is("-okdir")
}

// runsOtherCommands reports whether an allow form runs a command given in
// its words, so that only an exact rule can approve it.
func runsOtherCommands(form []shWord) bool {
	name, ok := form[0].lit()
	if !ok {
		return true
	}
	base := filepath.Base(name)
	if runsOthers()[base] {
		return !(base == "command" && len(form) > 1 && (form[1].is("-v") || form[1].is("-V")))
	}
	if base == "find" {
		for _, w := range form[1:] {
			if isFindExec(w) || w.is("-delete") || w.kind != wordLiteral && w.mayBeFlag() {
				return true
			}
		}
	}
	return false
}
