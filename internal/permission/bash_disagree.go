package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file finds the places where bash could read a command text
// differently from the parser (issue 8, class 1). The parser reads a text
// the way bash does almost always; where it does not, a command bash runs
// can be invisible to the checker (the parser took it for a comment or a
// here-document body) or the other way round. Every such construct is a
// "cannot prove": the text is marked unparsed and asked about.
//
// Known cases:
//   - The parser removes every backslash-newline before it reads tokens,
//     also at the end of a comment, where bash ends the comment and keeps
//     the next line as a command; and inside an unquoted here-document,
//     where bash joins the lines first and then compares the joined line
//     with the delimiter.
//   - Here-document delimiters that are not plain words: quotes that do not
//     cover the whole word, characters after the closing quote, expansions,
//     escapes, line continuations; bash and the parser can disagree on the
//     line that ends the body.
//   - A closing delimiter with more text on its line (EOF) inside $(…)).
//   - A body line equal to the delimiter inside an expansion that spans
//     lines (${x:-⏎EOF⏎…}): bash ends the body there, the parser does not.
//   - coproc NAME followed by a simple command or a redirection: the
//     parser takes the command's name for the coprocess's name.
//   - time -- cmd: bash takes "--" as the end of time's options, the
//     parser as the command name (see the TimeClause case of command),
//     also when time covers a pipeline or list ("time -- a | b").
//   - A line continuation against an operator or expansion ("$\⏎(",
//     "(\⏎(", "$\⏎'…'"): bash removes it before reading tokens, the
//     parser keeps it in some of its modes (a [[ =~ ]] pattern among
//     them) and reads another token (splitsToken).

// plainDelimRune reports whether r may appear in a here-document delimiter
// that the checker accepts.
func plainDelimRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

func plainDelim(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !plainDelimRune(r) {
			return false
		}
	}
	return true
}

// hdocDelim returns the delimiter of a here-document as bash compares it
// with the body's lines, and whether the body is quoted (no expansions, no
// line joining). ok is false when the delimiter word is not one of the
// plain forms: WORD, 'WORD', "WORD" or \WORD, with WORD made of letters,
// digits, '_', '-' and '.', and spelled in the text exactly so.
func hdocDelim(src string, w *syntax.Word) (delim string, quoted, ok bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", false, false
	}
	s, e := int(w.Pos().Offset()), int(w.End().Offset())
	if s < 0 || e > len(src) || s >= e {
		return "", false, false
	}
	spelled := src[s:e]
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		v := p.Value
		if strings.HasPrefix(v, `\`) && plainDelim(v[1:]) && spelled == v {
			return v[1:], true, true
		}
		if plainDelim(v) && spelled == v {
			return v, false, true
		}
	case *syntax.SglQuoted:
		if !p.Dollar && plainDelim(p.Value) && spelled == "'"+p.Value+"'" {
			return p.Value, true, true
		}
	case *syntax.DblQuoted:
		if p.Dollar || len(p.Parts) != 1 {
			return "", false, false
		}
		if l, isLit := p.Parts[0].(*syntax.Lit); isLit && plainDelim(l.Value) && spelled == `"`+l.Value+`"` {
			return l.Value, true, true
		}
	}
	return "", false, false
}

// disagreements checks a parsed text for the constructs above. It reports
// the first it finds.
func disagreements(src string, f *syntax.File) (why string) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.Comment:
			why = commentDisagrees(src, n)
		case *syntax.Redirect:
			if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
				why = hdocDisagrees(src, n)
			}
		case *syntax.CoprocClause:
			// bash takes a NAME only before a compound command: in
			// "coproc bash <<<x" bash is the command, not a name.
			if n.Name != nil && (n.Stmt == nil || n.Stmt.Cmd == nil) {
				why = "a coprocess whose name bash reads as its command"
			}
			// Anything but a compound command after the name (a simple
			// command, a pipeline "coproc touch x | ls", a list, a
			// declaration): bash reads the name as the command.
			if n.Name != nil && n.Stmt != nil && !compoundCmd(n.Stmt.Cmd) {
				why = "a coprocess whose name bash reads as its command"
			}
		}
		return true
	})
	return why
}

// compoundCmd reports whether c is one of bash's compound commands, the
// only commands a coprocess NAME may precede.
func compoundCmd(c syntax.Command) bool {
	switch c.(type) {
	case *syntax.Block, *syntax.Subshell, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause,
		*syntax.CaseClause, *syntax.ArithmCmd, *syntax.TestClause:
		return true
	}
	return false
}

// commentDisagrees checks that a comment is what bash reads as one: the
// rest of one line, not ending in a backslash.
func commentDisagrees(src string, c *syntax.Comment) string {
	off := int(c.Hash.Offset())
	if off < 0 || off >= len(src) || src[off] != '#' {
		return "a comment the parser places oddly"
	}
	// bash starts a comment only where a word may start; inside a word
	// ('EOF'#x) the '#' is an ordinary character.
	if off > 0 && !strings.ContainsRune(" \t\n;&|()", rune(src[off-1])) {
		return "a '#' the parser takes for a comment in the middle of a word"
	}
	line := src[off+1:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if strings.HasSuffix(line, `\`) {
		return "a comment that ends in a backslash (bash ends it at the newline)"
	}
	if line != c.Text {
		return "a comment the parser reads across lines"
	}
	return ""
}

// hdocDisagrees checks a here-document: a plain delimiter, a body whose
// lines bash reads as the parser does, and a closing line that holds the
// delimiter alone.
func hdocDisagrees(src string, r *syntax.Redirect) string {
	delim, quoted, ok := hdocDelim(src, r.Word)
	if !ok {
		return "a here-document delimiter that is not a plain word"
	}
	if r.Hdoc == nil {
		return "" // the delimiter closes at once; nothing to read differently
	}
	s, e := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
	if s < 0 || e > len(src) || s > e {
		return "a here-document the parser places oddly"
	}
	// The parser's span runs from the first body line to the end of the
	// closing delimiter; it leaves out line continuations in front.
	for s >= 2 && src[s-2:s] == "\\\n" {
		s -= 2
	}
	span := src[s:e]
	lines := strings.Split(span, "\n")
	last := lines[len(lines)-1]
	if r.Op == syntax.DashHdoc {
		last = strings.TrimLeft(last, "\t")
	}
	if last != delim {
		return "a here-document whose closing line is not its delimiter alone"
	}
	if e < len(src) && src[e] != '\n' {
		return "a here-document delimiter followed by more text on its line"
	}
	for _, l := range lines[:len(lines)-1] {
		if !quoted && strings.HasSuffix(l, `\`) {
			return "a here-document line that ends in a backslash (bash joins it with the next line)"
		}
		if r.Op == syntax.DashHdoc {
			l = strings.TrimLeft(l, "\t")
		}
		if l == delim {
			// bash ends the body at the first such line, even inside what
			// the parser reads as an expansion spanning lines
			return "a here-document body with its delimiter inside an expansion"
		}
	}
	if strings.ContainsRune(span, '\r') {
		return "a carriage return in a here-document"
	}
	return ""
}
