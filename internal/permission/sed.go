package permission

import "strings"

// sedCall is a parsed sed command line.
type sedCall struct {
	inPlace bool     // -i: the files are rewritten
	suffix  string   // -iSUFFIX, --in-place=SUFFIX: a backup of each file is kept
	files   []shWord // the file operands
}

// parseSed parses sed's words (without the name) and checks its scripts.
// It reports false for options it does not know, script files, scripts
// that are only known when the command runs, and scripts that could write
// files, read other files or run commands.
func parseSed(args []shWord) (sedCall, bool) {
	var s sedCall
	var scripts []string
	var operands []shWord
	haveScript := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		t, ok := w.lit()
		if !ok {
			if w.mayBeFlag() {
				return s, false
			}
			operands = append(operands, w)
			continue
		}
		switch {
		case t == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case t == "-" || !strings.HasPrefix(t, "-"):
			operands = append(operands, w)
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			switch name {
			case "quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data", "posix",
				"debug", "sandbox", "follow-symlinks", "zero-terminated":
			case "in-place":
				s.inPlace = true
				if eq {
					s.suffix = val
				}
			case "expression":
				if !eq {
					if i+1 >= len(args) {
						return s, false
					}
					i++
					v, ok := args[i].lit()
					if !ok {
						return s, false
					}
					val = v
				}
				scripts, haveScript = append(scripts, val), true
			case "line-length":
				if !eq {
					i++
				}
			default:
				return s, false // --file and anything unknown
			}
		default:
			for j := 1; j < len(t); j++ {
				switch c := t[j]; c {
				case 'n', 'E', 'r', 's', 'u', 'z':
				case 'i':
					s.inPlace = true
					s.suffix = t[j+1:] // the rest is the backup suffix
					j = len(t)
				case 'e', 'l':
					val := t[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return s, false
						}
						i++
						v, ok := args[i].lit()
						if !ok {
							return s, false
						}
						val = v
					}
					if c == 'e' {
						scripts, haveScript = append(scripts, val), true
					}
					j = len(t)
				default:
					return s, false // -f and anything unknown
				}
			}
		}
	}
	if !haveScript {
		if len(operands) == 0 {
			return s, false
		}
		t, ok := operands[0].lit()
		if !ok {
			return s, false
		}
		scripts = append(scripts, t)
		operands = operands[1:]
	}
	for _, sc := range scripts {
		if !sedScriptSafe(sc) {
			return s, false
		}
	}
	for _, o := range operands {
		if !o.is("-") {
			s.files = append(s.files, o)
		}
	}
	return s, true
}

// sedScriptSafe accepts scripts made of addresses and the commands that
// only print, delete, quit, or edit the pattern and hold spaces: p d D n
// N g G h H x l P z = q Q, s with the flags g p i I m M and a count, and y.
func sedScriptSafe(sc string) bool {
	i := 0
	n := len(sc)
	skipSpace := func() {
		for i < n && (sc[i] == ' ' || sc[i] == '\t') {
			i++
		}
	}
	// address parses one address; it reports false on a malformed one.
	address := func() bool {
		switch {
		case i < n && sc[i] >= '0' && sc[i] <= '9':
			for i < n && sc[i] >= '0' && sc[i] <= '9' {
				i++
			}
			if i < n && sc[i] == '~' {
				i++
				for i < n && sc[i] >= '0' && sc[i] <= '9' {
					i++
				}
			}
		case i < n && sc[i] == '$':
			i++
		case i < n && sc[i] == '/':
			j, ok := sedField(sc, i+1, '/')
			if !ok {
				return false
			}
			i = j + 1
			for i < n && (sc[i] == 'I' || sc[i] == 'M') {
				i++
			}
		}
		return true
	}
	for {
		skipSpace()
		for i < n && (sc[i] == ';' || sc[i] == '\n' || sc[i] == ' ' || sc[i] == '\t') {
			i++
		}
		if i >= n {
			return true
		}
		if !address() {
			return false
		}
		if i < n && sc[i] == ',' {
			i++
			if i < n && (sc[i] == '+' || sc[i] == '~') {
				i++
			}
			if !address() {
				return false
			}
		}
		skipSpace()
		if i < n && sc[i] == '!' {
			i++
			skipSpace()
		}
		if i >= n {
			return false
		}
		c := sc[i]
		i++
		switch c {
		case 'p', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'P', 'z', '=':
		case 'l', 'q', 'Q':
			skipSpace()
			for i < n && sc[i] >= '0' && sc[i] <= '9' {
				i++
			}
		case 's', 'y':
			if i >= n {
				return false
			}
			d := sc[i]
			if d == '\\' || d == '\n' || d == ' ' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' {
				return false
			}
			j, ok := sedField(sc, i+1, d)
			if !ok {
				return false
			}
			k, ok := sedField(sc, j+1, d)
			if !ok {
				return false
			}
			i = k + 1
			if c == 's' {
				for i < n && strings.IndexByte("gpiImM0123456789", sc[i]) >= 0 {
					i++
				}
			}
		default:
			return false // w, W, r, R, e, a, i, c, {, }, :, b, t, T, F, v, …
		}
		skipSpace()
		if i < n && sc[i] != ';' && sc[i] != '\n' {
			return false
		}
	}
}

// sedField returns the index of the unescaped delimiter d that ends the
// field starting at i.
func sedField(sc string, i int, d byte) (int, bool) {
	for ; i < len(sc); i++ {
		switch sc[i] {
		case '\\':
			i++
		case '\n':
			return 0, false
		case d:
			return i, true
		}
	}
	return 0, false
}

// backups returns the backup files sed -i writes for its files. GNU sed
// names a backup FILE+SUFFIX when the suffix has no '*'; otherwise the
// suffix with every '*' replaced by the file name as given (GNU sed 4.9),
// or by its base name in the file's directory (older versions), relative
// to the working directory: both forms are returned, and a suffix with
// '/' or '*' on a file name only known when it runs gives an unknown word.
// A suffix of "*" alone names the file itself.
func (s sedCall) backups() []shWord {
	if s.suffix == "" {
		return nil
	}
	template := strings.ContainsAny(s.suffix, "*/")
	var out []shWord
	for _, f := range s.files {
		switch t, ok := f.lit(); {
		case ok && strings.Contains(s.suffix, "*"):
			out = append(out, litWord(strings.ReplaceAll(s.suffix, "*", t)))
			dir, base := "", t
			if k := strings.LastIndexByte(t, '/'); k >= 0 {
				dir, base = t[:k+1], t[k+1:]
			}
			out = append(out, litWord(dir+strings.ReplaceAll(s.suffix, "*", base)))
		case ok:
			out = append(out, litWord(t+s.suffix))
		case template:
			out = append(out, shWord{kind: wordUnknown})
		case f.kind == wordTilde:
			out = append(out, shWord{kind: wordTilde, text: f.text + s.suffix, safe: f.safe && safeText(s.suffix, false)})
		case f.kind == wordGlob:
			out = append(out, shWord{kind: wordGlob, text: f.text + s.suffix, pat: f.pat + escapeMatch(s.suffix), safe: f.safe && safeText(s.suffix, false)})
		default:
			out = append(out, shWord{kind: wordUnknown})
		}
	}
	return out
}
