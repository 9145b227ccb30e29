package permission

import "strings"

// argSpec describes the options of a command for parseArgs.
//
// A spec with longFlags set is complete for long options: every long
// option the tool accepts is in longFlags, longVal or longOpt, so that an
// abbreviation ("--out" for "--output") is resolved as GNU getopt and
// git's parse-options resolve it (an exact name, else a unique prefix), and
// a long option that is unknown or ambiguous sets parsedArgs.unknown.
// Likewise shortFlags, when set, lists every short option without a value.
// Without those lists, unknown options are taken as flags, and callers
// must only rely on the conservative helpers (hasBad, has, values), which
// count abbreviations.
type argSpec struct {
	shortVal   string          // short options that take a value (attached or the next word)
	shortOpt   string          // short options whose value is optional and only attached
	shortFlags string          // every short option without a value ("" = not listed)
	longVal    map[string]bool // long options (without "--") that take a value ("=v" or the next word)
	longOpt    map[string]bool // long options whose value is optional and only given with "="
	longFlags  map[string]bool // every long option without a value (nil = not listed)
	// posixStop: the first operand ends the options (POSIX getopt);
	// otherwise options are recognized after operands too (GNU getopt).
	posixStop bool
}

// option is one option as parsed: "-x" or "--name", with its value.
type option struct {
	name     string
	value    shWord
	hasValue bool
}

// parsedArgs is a command's words split into options and operands.
type parsedArgs struct {
	opts     []option
	operands []shWord
	// unsure is set when a word that cannot be known might be an option.
	unsure bool
	// unknown is set when an option is not in a complete spec, or is an
	// ambiguous abbreviation.
	unknown bool
}

// optMatches reports whether the parsed option name o stands for the
// option n: the same name, or for long options an abbreviation of it.
func optMatches(o, n string) bool {
	if o == n {
		return true
	}
	return strings.HasPrefix(o, "--") && len(o) > 2 && strings.HasPrefix(n, "--") && strings.HasPrefix(n, o)
}

// has reports whether one of the options names is present, counting
// abbreviations of long options: a caller that treats presence as the
// reason for more checking stays on the safe side.
func (p *parsedArgs) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if optMatches(o.name, n) {
				return true
			}
		}
	}
	return false
}

// hasBad reports whether an option is one of bad, counting the
// abbreviations GNU tools accept for long options ("--out" for
// "--output").
func (p *parsedArgs) hasBad(bad ...string) bool { return p.has(bad...) }

// hasPrefix reports whether an option name starts with one of prefixes.
func (p *parsedArgs) hasPrefix(prefixes ...string) bool {
	for _, o := range p.opts {
		for _, n := range prefixes {
			if strings.HasPrefix(o.name, n) {
				return true
			}
		}
	}
	return false
}

// values returns the values of the options names (abbreviations counted).
func (p *parsedArgs) values(names ...string) []shWord {
	var out []shWord
	for _, o := range p.opts {
		if !o.hasValue {
			continue
		}
		for _, n := range names {
			if optMatches(o.name, n) {
				out = append(out, o.value)
				break
			}
		}
	}
	return out
}

func litWord(s string) shWord { return shWord{kind: wordLiteral, text: s, safe: safeText(s, false)} }

// longKind is how a long option takes its value.
type longKind uint8

const (
	longUnknown longKind = iota
	longFlag
	longValued
	longOptional
)

// resolveLong finds the long option name (without "--") stands for: an
// exact name, else the only option it is a prefix of. It reports the
// canonical name and its kind; longUnknown when the spec is complete and
// the name is unknown or ambiguous, or when the spec is not complete and
// the name is not an exact valued or optional one (then the name is kept).
func (spec argSpec) resolveLong(name string) (string, longKind) {
	kindOf := func(n string) longKind {
		switch {
		case spec.longVal[n]:
			return longValued
		case spec.longOpt[n]:
			return longOptional
		case spec.longFlags[n]:
			return longFlag
		}
		return longUnknown
	}
	if k := kindOf(name); k != longUnknown {
		return name, k
	}
	if spec.longFlags == nil {
		return name, longUnknown
	}
	matches := map[string]bool{}
	for _, m := range []map[string]bool{spec.longVal, spec.longOpt, spec.longFlags} {
		for full := range m {
			if strings.HasPrefix(full, name) {
				matches[full] = true
			}
		}
	}
	if len(matches) != 1 || name == "" {
		return name, longUnknown
	}
	for full := range matches {
		return full, kindOf(full)
	}
	return name, longUnknown
}

// parseArgs splits args (without the command name) getopt-style: clusters
// of short options, values attached or in the next word, "--name=value",
// and "--" ending the options. Options are recognized anywhere, as GNU
// tools do, unless spec.posixStop.
func parseArgs(args []shWord, spec argSpec) parsedArgs {
	var p parsedArgs
	for i := 0; i < len(args); i++ {
		w := args[i]
		t, ok := w.lit()
		if !ok {
			if w.mayBeFlag() {
				p.unsure = true
			}
			p.operands = append(p.operands, w)
			if spec.posixStop {
				p.operands = append(p.operands, args[i+1:]...)
				return p
			}
			continue
		}
		switch {
		case t == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p
		case t == "-" || !strings.HasPrefix(t, "-"):
			p.operands = append(p.operands, w)
			if spec.posixStop {
				p.operands = append(p.operands, args[i+1:]...)
				return p
			}
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			full, kind := spec.resolveLong(name)
			o := option{name: "--" + full}
			switch {
			case kind == longUnknown && spec.longFlags != nil:
				p.unknown = true
			case kind == longFlag && eq:
				p.unknown = true // a value for an option that takes none: an error, or not what we think
			}
			if eq {
				o.value, o.hasValue = litWord(val), true
			} else if kind == longValued && i+1 < len(args) {
				o.value, o.hasValue = args[i+1], true
				i++
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(t); j++ {
				c := t[j]
				o := option{name: "-" + string(c)}
				valued := strings.IndexByte(spec.shortVal, c) >= 0
				optional := strings.IndexByte(spec.shortOpt, c) >= 0
				if !valued && !optional && spec.shortFlags != "" && strings.IndexByte(spec.shortFlags, c) < 0 {
					p.unknown = true
				}
				if valued || optional {
					if j+1 < len(t) {
						o.value, o.hasValue = litWord(t[j+1:]), true
					} else if valued && i+1 < len(args) {
						o.value, o.hasValue = args[i+1], true
						i++
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p
}
