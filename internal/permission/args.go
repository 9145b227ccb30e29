package permission

import "strings"

// argSpec describes the options of a command for parseArgs.
type argSpec struct {
	shortVal string          // short options that take a value
	longVal  map[string]bool // long options (without "--") that take a value when written without "="
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
}

func (p *parsedArgs) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// hasBad reports whether an option is one of bad, counting the
// abbreviations GNU tools accept for long options ("--out" for
// "--output").
func (p *parsedArgs) hasBad(bad ...string) bool {
	for _, o := range p.opts {
		for _, b := range bad {
			if o.name == b || strings.HasPrefix(o.name, "--") && len(o.name) > 2 && strings.HasPrefix(b, o.name) {
				return true
			}
		}
	}
	return false
}

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

func (p *parsedArgs) values(names ...string) []shWord {
	var out []shWord
	for _, o := range p.opts {
		if o.hasValue && contains(names, o.name) {
			out = append(out, o.value)
		}
	}
	return out
}

func litWord(s string) shWord { return shWord{kind: wordLiteral, text: s, safe: safeText(s, false)} }

// parseArgs splits args (without the command name) getopt-style: clusters
// of short options, values attached or in the next word, "--name=value",
// and "--" ending the options. Options are recognized anywhere, as GNU
// tools do.
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
			continue
		}
		switch {
		case t == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p
		case t == "-" || !strings.HasPrefix(t, "-"):
			p.operands = append(p.operands, w)
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			o := option{name: "--" + name}
			if eq {
				o.value, o.hasValue = litWord(val), true
			} else if spec.longVal[name] && i+1 < len(args) {
				o.value, o.hasValue = args[i+1], true
				i++
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(t); j++ {
				c := t[j]
				o := option{name: "-" + string(c)}
				if strings.IndexByte(spec.shortVal, c) >= 0 {
					if j+1 < len(t) {
						o.value, o.hasValue = litWord(t[j+1:]), true
					} else if i+1 < len(args) {
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
