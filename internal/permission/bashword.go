package permission

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// unknownWord stands, in the text a rule is matched against, for a word
// whose value cannot be known before the command runs. Rules cannot
// contain it (they reject control characters), so only a '*' can match it.
const unknownWord = "\x00"

// patternStar stands for a '*' of a Bash rule while the rule's text goes
// through the shell parser.
const patternStar = "\uE000"

type wordKind uint8

const (
	wordLiteral wordKind = iota // fully known after quote removal
	wordTilde                   // "~" or "~/rest": the home directory, then known text
	wordGlob                    // known apart from unquoted '*' and '?' that the shell expands
	wordUnknown                 // expansions, brace expansion, bracket globs, …
)

// shWord is one shell word as far as it can be known before it runs.
type shWord struct {
	kind wordKind
	// text is the value for wordLiteral, the part after "~" for wordTilde
	// ("" or starting with '/'), and for wordGlob the text the shell passes
	// on when nothing matches.
	text string
	// pat is, for wordGlob, a filepath.Match pattern with the literal
	// characters escaped.
	pat string
	// safe is set when every literal character is one that needs no
	// quoting, so that the word can be shown unquoted.
	safe bool
	// split is set when an unquoted expansion may split the word in several.
	split bool
}

func (w shWord) lit() (string, bool) { return w.text, w.kind == wordLiteral }

// is reports whether w is the literal s.
func (w shWord) is(s string) bool { return w.kind == wordLiteral && w.text == s }

// mayBeFlag reports whether the word could, once expanded, start with '-'.
func (w shWord) mayBeFlag() bool {
	switch w.kind {
	case wordLiteral:
		return strings.HasPrefix(w.text, "-")
	case wordTilde:
		return false
	case wordGlob:
		return w.text == "" || w.text[0] == '-' || w.text[0] == '*' || w.text[0] == '?'
	}
	return true
}

// canon renders the word for rule matching: a literal as a shell-quoted
// word, globs and tilde words unquoted when that is unambiguous, anything
// else as unknownWord.
func (w shWord) canon(pattern bool) string {
	switch w.kind {
	case wordLiteral:
		if w.text != "" && safeText(w.text, pattern) {
			return w.text
		}
		return "'" + strings.ReplaceAll(w.text, "'", `'\''`) + "'"
	case wordTilde:
		if w.safe {
			return "~" + w.text
		}
	case wordGlob:
		if w.safe {
			return w.text
		}
	}
	return unknownWord
}

// safeText reports whether s can be shown unquoted.
func safeText(s string, pattern bool) bool {
	for _, r := range s {
		if !safeRune(r) && !(pattern && r == []rune(patternStar)[0]) {
			return false
		}
	}
	return true
}

func safeRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)
}

// wordBuilder accumulates the parts of a word.
type wordBuilder struct {
	a                *analyzer
	text, pat        strings.Builder
	unknown, glob    bool
	split            bool
	safe             bool
	tilde            bool
	braceOpen        int
	braceSep         bool
	lastUnquotedDot  bool
	sawUnquotedEqual bool
}

// word evaluates a word as far as possible, and analyses the commands in
// its substitutions.
func (a *analyzer) word(w *syntax.Word) shWord {
	if w == nil || len(w.Parts) == 0 {
		return shWord{kind: wordLiteral, safe: true}
	}
	b := &wordBuilder{a: a, safe: true}
	for i, p := range w.Parts {
		b.part(p, i == 0, i == len(w.Parts)-1 && i == 0)
	}
	return b.finish()
}

func (b *wordBuilder) finish() shWord {
	switch {
	case b.unknown:
		return shWord{kind: wordUnknown, split: b.split}
	case b.tilde && b.glob:
		return shWord{kind: wordUnknown}
	case b.tilde:
		return shWord{kind: wordTilde, text: b.text.String(), safe: b.safe}
	case b.glob:
		return shWord{kind: wordGlob, text: b.text.String(), pat: b.pat.String(), safe: b.safe}
	}
	return shWord{kind: wordLiteral, text: b.text.String(), safe: b.safe}
}

// lit adds a character that stands for itself.
func (b *wordBuilder) lit(r rune) {
	b.text.WriteRune(r)
	if strings.ContainsRune(`*?[]\`, r) {
		b.pat.WriteByte('\\')
	}
	b.pat.WriteRune(r)
	if !safeRune(r) && !(b.a.pattern && r == []rune(patternStar)[0]) {
		b.safe = false
	}
}

func (b *wordBuilder) part(p syntax.WordPart, first, only bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.unquoted(p.Value, first, only)
	case *syntax.SglQuoted:
		v := p.Value
		if p.Dollar {
			d, ok := decodeANSIC(v)
			if !ok {
				b.unknown = true
				return
			}
			v = d
		}
		for _, r := range v {
			b.lit(r)
		}
	case *syntax.DblQuoted:
		if p.Dollar { // $"…" is translated through the locale
			b.unknown = true
		}
		for _, q := range p.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				b.doubleQuoted(l.Value)
				continue
			}
			b.expansion(q, false)
		}
	default:
		b.expansion(p, true)
	}
}

// expansion handles the parts that are only known when the command runs.
func (b *wordBuilder) expansion(p syntax.WordPart, unquoted bool) {
	b.unknown = true
	if unquoted {
		b.split = true
	}
	a := b.a
	switch p := p.(type) {
	case *syntax.ParamExp:
		a.paramExp(p)
	case *syntax.CmdSubst:
		if p.TempFile || p.ReplyVar {
			a.problem("unusual command substitution")
		}
		a.markSeen(p)
		a.nestedStmts(p.Stmts)
	case *syntax.ProcSubst:
		if p.Op == syntax.CmdInTemp {
			a.problem("unusual process substitution")
		}
		a.markSeen(p)
		a.async++
		a.nestedStmts(p.Stmts)
		a.async--
	case *syntax.ArithmExp:
		a.problem("arithmetic expansion")
		a.arithm(p.X)
	case *syntax.ExtGlob, *syntax.BraceExp:
		// only the shell knows what these become
	default:
		a.problem("unusual word")
	}
}

// unquoted processes the text of an unquoted literal part.
func (b *wordBuilder) unquoted(s string, first, only bool) {
	if first && strings.HasPrefix(s, "~") {
		switch {
		case s == "~" && only, strings.HasPrefix(s, "~/"):
			b.tilde = true
			s = s[1:]
		default:
			b.unknown = true // ~user, ~+, ~- and the like
			return
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		dot := false
		switch r {
		case '\\':
			if i >= len(s) {
				b.lit('\\')
				break
			}
			e, n := utf8.DecodeRuneInString(s[i:])
			i += n
			if e != '\n' {
				b.lit(e)
			}
		case '*', '?':
			b.glob = true
			b.text.WriteRune(r)
			b.pat.WriteRune(r)
		case '[':
			if strings.ContainsRune(s[i:], ']') {
				b.unknown = true // bracket expressions differ between the shell and Go
			}
			b.lit(r)
		case '{':
			b.braceOpen++
			b.lit(r)
		case '}':
			if b.braceOpen > 0 && b.braceSep {
				b.unknown = true // brace expansion
			}
			if b.braceOpen > 0 {
				b.braceOpen--
			}
			b.lit(r)
		case ',':
			if b.braceOpen > 0 {
				b.braceSep = true
			}
			b.lit(r)
		case '.':
			if b.braceOpen > 0 && b.lastUnquotedDot {
				b.braceSep = true
			}
			dot = true
			b.lit(r)
		case '~':
			if b.text.Len() > 0 && (b.sawUnquotedEqual || strings.ContainsRune(":", lastRune(b.text.String()))) {
				b.unknown = true // tilde after '=' or ':' may expand
			}
			b.lit(r)
		case '=':
			b.sawUnquotedEqual = true
			b.lit(r)
		default:
			b.lit(r)
		}
		b.lastUnquotedDot = dot
	}
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// doubleQuoted processes the text of a literal inside double quotes, where
// a backslash only escapes '$', '`', '"', '\' and a newline.
func (b *wordBuilder) doubleQuoted(s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '\\' && i < len(s) {
			switch s[i] {
			case '$', '`', '"', '\\':
				b.lit(rune(s[i]))
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.lit(r)
	}
}

// paramExp checks a parameter expansion. Plain $name and ${name}, lengths,
// defaults, pattern removal, replacement and case changes only produce
// text; forms that assign, evaluate arithmetic (which can run commands
// through array subscripts), expand indirectly or expand prompts are
// problems.
func (a *analyzer) paramExp(p *syntax.ParamExp) {
	if p.Flags != nil || p.Excl || p.Width || p.IsSet || p.NestedParam != nil || len(p.Modifiers) > 0 ||
		p.Slice != nil || p.Names != 0 || p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset ||
		p.RcExpand != syntax.OptUnset {
		a.problem("complex parameter expansion")
	}
	if p.Index != nil {
		w, ok := p.Index.(*syntax.Word)
		if !ok || !simpleIndex(w) {
			a.problem("array subscript in an expansion")
		}
		a.arithm(p.Index) // the commands of ${a[$(…)]}
	}
	if p.Slice != nil {
		a.arithm(p.Slice.Offset) // ${x:$(…)}
		a.arithm(p.Slice.Length)
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
			syntax.ErrorUnset, syntax.ErrorUnsetOrNull, syntax.RemSmallSuffix, syntax.RemLargeSuffix,
			syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.UpperFirst, syntax.UpperAll,
			syntax.LowerFirst, syntax.LowerAll:
		default:
			a.problem("parameter expansion that assigns or evaluates")
		}
		a.word(p.Exp.Word)
	}
	if p.Repl != nil {
		a.word(p.Repl.Orig)
		a.word(p.Repl.With)
	}
}

func simpleIndex(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	if l.Value == "@" || l.Value == "*" {
		return true
	}
	_, err := strconv.Atoi(l.Value)
	return err == nil
}

// arithm walks an arithmetic expression for the command substitutions in
// it (so that deny rules still see them).
func (a *analyzer) arithm(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			a.word(w)
			return false
		}
		return true
	})
}

// decodeANSIC decodes the body of a $'…' string. It reports false for
// escapes it does not know.
func decodeANSIC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			b.WriteByte('\\')
			break
		}
		switch c = s[i]; c {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				return "", false
			}
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				if v == 0 || v > utf8.MaxRune {
					return "", false
				}
				b.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			return "", false
		}
	}
	if strings.ContainsRune(b.String(), 0) {
		return "", false // the shell cuts the word at a NUL
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
