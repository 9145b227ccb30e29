package tools

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// grepDFA finds the lines that hold a match of a pattern that no literal
// narrows down. Go's regexp runs an NFA simulation over long texts, some
// 30 MB/s; this automaton, built lazily from the same program, takes one
// table look-up per byte of a file and only says where a line matches, at
// which point the regexp runs on that one line to find the matches.
//
// It is for patterns that cannot match a line break (which Grep ensures
// unless multiline is set) and that have no \A or \z: lines are then
// independent, and a match on a line is a match of the line alone.
//
// A state is the set of program instructions waiting for the next rune,
// with the kind of rune before it (which empty-width assertions such as
// ^, $ and \b need); the instructions are expanded under those assertions
// when the next rune is known. Every position is also a possible start, as
// the search is unanchored. A transition to dfaMatched means that a match
// ends before the rune. States are kept per goroutine, in a pool.
type grepDFA struct {
	prog   *syntax.Prog
	failed atomic.Bool // too many states: the regexp does all the work
	pool   sync.Pool   // of *dfaCache
}

// Bounds on a cache: past dfaMaxStates states it is emptied, and after
// dfaMaxResets such flushes the automaton is given up.
const (
	dfaMaxStates = 2000
	dfaMaxResets = 8
)

// The kinds of rune before a position, as empty-width assertions see them.
const (
	dfaAtText    = iota // no rune: the start of the text
	dfaAfterNL          // a line break
	dfaAfterWord        // an ASCII word character
	dfaAfterOther
)

// dfaKindRune is a rune of each kind, for syntax.EmptyOpContext.
var dfaKindRune = [...]rune{dfaAtText: -1, dfaAfterNL: '\n', dfaAfterWord: 'a', dfaAfterOther: ' '}

type dfaState struct {
	// next holds the transitions on ASCII bytes, nil until known; those
	// on other bytes stay nil, as such a byte starts a rune that is
	// decoded first.
	next  [256]*dfaState
	other map[rune]*dfaState // transitions on other runes, and on invalid bytes
	pcs   []uint32           // the instructions waiting for a rune, sorted
	kind  uint8              // the kind of rune before
	atEnd int8               // 0: not known yet; 1: a match ends at the end of the text; -1: none
}

// dfaMatched is where a transition leads when a match ends before the rune.
var dfaMatched = &dfaState{}

// dfaCache holds the states one goroutine has built.
type dfaCache struct {
	d      *grepDFA
	states map[string]*dfaState
	resets int
	// Scratch space for building states.
	seen  []uint32 // sparse set of instructions visited by the expansion
	dense []uint32
	stack []uint32
	runes []uint32 // rune instructions reached
	next  []uint32
	key   []byte
}

func newGrepDFA(expr string) *grepDFA {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil
	}
	d := &grepDFA{prog: prog}
	d.pool.New = func() any {
		n := len(prog.Inst)
		return &dfaCache{d: d, states: map[string]*dfaState{}, seen: make([]uint32, n), dense: make([]uint32, 0, n)}
	}
	return d
}

// state returns the state for the instructions pcs (sorted) after a rune
// of the given kind, or nil when the automaton has grown too big.
func (c *dfaCache) state(pcs []uint32, kind uint8) *dfaState {
	c.key = append(c.key[:0], kind)
	for _, pc := range pcs {
		c.key = binary.LittleEndian.AppendUint32(c.key, pc)
	}
	if s, ok := c.states[string(c.key)]; ok {
		return s
	}
	if len(c.states) >= dfaMaxStates {
		c.resets++
		if c.resets > dfaMaxResets {
			c.d.failed.Store(true)
			return nil
		}
		c.states = map[string]*dfaState{}
	}
	s := &dfaState{pcs: slices.Clone(pcs), kind: kind}
	c.states[string(c.key)] = s
	return s
}

// expand visits the instructions reachable from pc without consuming a
// rune, at a position whose context is ctx. It reports whether it reached
// a match; the rune instructions reached are added to c.runes.
func (c *dfaCache) expand(pc uint32, ctx syntax.EmptyOp) bool {
	prog := c.d.prog
	matched := false
	c.stack = append(c.stack[:0], pc)
	for len(c.stack) > 0 {
		pc := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		if i := c.seen[pc]; int(i) < len(c.dense) && c.dense[i] == pc {
			continue
		}
		c.seen[pc] = uint32(len(c.dense))
		c.dense = append(c.dense, pc)
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			c.stack = append(c.stack, inst.Arg, inst.Out)
		case syntax.InstNop, syntax.InstCapture:
			c.stack = append(c.stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^ctx == 0 {
				c.stack = append(c.stack, inst.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			c.runes = append(c.runes, pc)
		}
	}
	return matched
}

// expandAll expands the instructions of s and the program's start at a
// position before rune r (-1: the end of the text).
func (c *dfaCache) expandAll(s *dfaState, r rune) bool {
	ctx := syntax.EmptyOpContext(dfaKindRune[s.kind], r)
	c.dense = c.dense[:0]
	c.runes = c.runes[:0]
	matched := false
	for _, pc := range s.pcs {
		matched = c.expand(pc, ctx) || matched
	}
	return c.expand(uint32(c.d.prog.Start), ctx) || matched
}

// step returns the state after rune r from s: dfaMatched when a match ends
// before r, nil when the automaton has grown too big.
func (c *dfaCache) step(s *dfaState, r rune) *dfaState {
	if c.expandAll(s, r) {
		return dfaMatched
	}
	prog := c.d.prog
	c.next = c.next[:0]
	for _, pc := range c.runes {
		inst := &prog.Inst[pc]
		ok := false
		switch inst.Op {
		case syntax.InstRuneAny:
			ok = true
		case syntax.InstRuneAnyNotNL:
			ok = r != '\n'
		default:
			ok = inst.MatchRune(r)
		}
		if ok {
			c.next = append(c.next, inst.Out)
		}
	}
	slices.Sort(c.next)
	c.next = slices.Compact(c.next)
	kind := uint8(dfaAfterOther)
	switch {
	case r == '\n':
		kind = dfaAfterNL
	case syntax.IsWordChar(r):
		kind = dfaAfterWord
	}
	return c.state(c.next, kind)
}

// matchesAtEnd reports whether a match ends at the end of the text in s.
func (c *dfaCache) matchesAtEnd(s *dfaState) bool {
	if s.atEnd == 0 {
		s.atEnd = -1
		if c.expandAll(s, -1) {
			s.atEnd = 1
		}
	}
	return s.atEnd > 0
}

// search returns the matches of re in data as grepMatcher.search does,
// using the automaton to find the lines to run re on.
func (d *grepDFA) search(cc *cancelCheck, re *regexp.Regexp, data []byte, first bool, perLine int) ([][]int, error) {
	if d.failed.Load() {
		return d.fallback(re, data, first), nil
	}
	c := d.pool.Get().(*dfaCache)
	defer d.pool.Put(c)
	var locs [][]int
	// line runs re on the line holding offset i; it reports whether the
	// search is over, and returns the offset of the next line.
	line := func(i int) (done bool, next int) {
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := lineEndAt(data, i)
		locs = appendLineMatches(locs, re, data, start, end, first, perLine)
		return first && len(locs) > 0, end + 1
	}
	s := c.state(nil, dfaAtText)
	i := 0
	for s != nil && i < len(data) {
		if cc.stop(i) {
			return locs, cc.ctx.Err()
		}
		// The loop that does the work: known transitions on ASCII, up to
		// the next look at the context.
		for lim := min(len(data), cc.next); i < lim; {
			next := s.next[data[i]]
			if next == nil || next == dfaMatched {
				break
			}
			s = next
			i++
		}
		if i == len(data) {
			break
		}
		if i == cc.next {
			continue
		}
		next := s.next[data[i]]
		w := 1
		if b := data[i]; b < utf8.RuneSelf {
			if next == nil {
				next = c.step(s, rune(b))
				s.next[b] = next
			}
		} else {
			var r rune
			r, w = utf8.DecodeRune(data[i:])
			next = s.other[r]
			if next == nil {
				next = c.step(s, r)
				if s.other == nil {
					s.other = map[rune]*dfaState{}
				}
				s.other[r] = next
			}
		}
		if next == dfaMatched {
			done, after := line(i)
			if done {
				return locs, nil
			}
			i = after
			s = c.state(nil, dfaAfterNL)
			continue
		}
		s = next
		i += w
	}
	if s == nil {
		return d.fallback(re, data, first), nil
	}
	// i is past the end when the last line, without a line break, has
	// just been searched.
	if i == len(data) && !phantom(data, i) && c.matchesAtEnd(s) {
		line(i)
	}
	return locs, nil
}

// fallback finds the matches with the regexp alone, once the automaton is
// given up.
func (d *grepDFA) fallback(re *regexp.Regexp, data []byte, first bool) [][]int {
	n := -1
	if first {
		n = 1
	}
	locs := re.FindAllIndex(data, n)
	if len(locs) > 0 && phantom(data, locs[len(locs)-1][0]) {
		locs = locs[:len(locs)-1]
	}
	return locs
}
