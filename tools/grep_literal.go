package tools

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
)

// grepByteOrder lists the bytes that are common in source code,
// the most frequent first (as counted in the Go distribution's sources).
// Bytes not listed are taken to be rarer than all of them.
const grepByteOrder = " etr\tnia\nsolcduf,p./()0mhg\"=xbyS{}T1E:_v2CwIkAPR46ON3FDLM[]8-5B*\\G9H7U!%&+;Vz'qWYK<`j|X>QJZ#^?$~@"

// grepByteRank is the position of byte c in grepByteOrder, 255 for one
// not listed: the higher, the rarer.
func grepByteRank(c byte) int {
	if i := strings.IndexByte(grepByteOrder, c); i >= 0 {
		return i
	}
	return 255
}

// rarity is how rare byte c is, in both cases when fold is set: a letter
// is then as rare as its commoner form.
func rarity(c byte, fold bool) int {
	r := grepByteRank(c)
	if fold {
		if u := upperASCII(c); u != c {
			r = min(r, grepByteRank(u))
		}
	}
	return r
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// rarestByte returns the offset of the rarest byte of lit.
func rarestByte(lit []byte, fold bool) int {
	best := 0
	for i := range lit {
		if rarity(lit[i], fold) > rarity(lit[best], fold) {
			best = i
		}
	}
	return best
}

// betterLiteral reports whether literal a is a better prefilter than b:
// longer up to four bytes, then rarer, then longer.
func betterLiteral(a string, af bool, b string, bf bool) bool {
	if la, lb := min(len(a), 4), min(len(b), 4); la != lb {
		return la > lb
	}
	if a == "" {
		return false
	}
	ra := rarity(a[rarestByte([]byte(a), af)], af)
	rb := rarity(b[rarestByte([]byte(b), bf)], bf)
	if ra != rb {
		return ra > rb
	}
	return len(a) > len(b)
}

// litPlan is how a matcher looks for its literal. When the literal's
// rarest byte is rare enough, IndexByte finds it (in both cases for a
// folded literal) and the rest is compared where it is. Otherwise two bytes
// of the literal are tested at once, eight positions at a time, so that
// only the few places where both are right are compared.
type litPlan struct {
	// rare is the offset in the literal of its rarest byte; rareForm holds
	// that byte, and in upper case too when folding, forms being the number
	// of forms.
	rare     int
	rareForm [2]byte
	forms    int
	// byPair is set to test two bytes at once: those at offsets pair[0]
	// and pair[1], once ORed with pairMask (0x20 to lower-case a folded
	// letter), must equal pairByte.
	byPair   bool
	pair     [2]int
	pairMask [2]uint64
	pairByte [2]uint64
}

// Rarity ranks above which IndexByte is used: for a byte looked for in one
// form, about 1.3% of source code bytes and rarer; in two forms, 0.5%.
const (
	litOneFormRank = 23
	litTwoFormRank = 40
)

func newLitPlan(lit []byte, fold bool) litPlan {
	var p litPlan
	p.rare = rarestByte(lit, fold)
	c := lit[p.rare]
	p.rareForm, p.forms = [2]byte{c, c}, 1
	if u := upperASCII(c); fold && u != c {
		p.rareForm[1], p.forms = u, 2
	}
	r := rarity(c, fold)
	if len(lit) < 2 || p.forms == 1 && r >= litOneFormRank || p.forms == 2 && r >= litTwoFormRank {
		return p
	}
	// The pair is the rarest byte and the rarest at another offset.
	second := -1
	for i := range lit {
		if i != p.rare && (second < 0 || rarity(lit[i], fold) > rarity(lit[second], fold)) {
			second = i
		}
	}
	p.byPair = true
	p.pair = [2]int{min(p.rare, second), max(p.rare, second)}
	for k, off := range p.pair {
		b := lit[off]
		var mask byte
		if fold && 'a' <= b && b <= 'z' {
			mask = 0x20
		}
		p.pairMask[k] = 0x0101010101010101 * uint64(mask)
		p.pairByte[k] = 0x0101010101010101 * uint64(b)
	}
	return p
}

// litScan finds the required literal of a matcher in data, from left to
// right, as its litPlan says. A folded literal's rare byte is looked for
// in both cases; the position of each is kept, so that every byte of data
// is looked at at most once per form.
type litScan struct {
	m    *grepMatcher
	data []byte
	next [2]int // next offset of each form of the rare byte; -1: none left; -2: not looked for yet
}

func (m *grepMatcher) scanner(data []byte) litScan {
	return litScan{m: m, data: data, next: [2]int{-2, -2}}
}

// index returns the offset of the first occurrence of the literal at or
// after from, or -1.
func (s *litScan) index(from int) int {
	if s.m.byPair {
		return s.indexByPair(from)
	}
	m := s.m
	n, r := len(m.lit), m.rare
	last := len(s.data) - n // the last offset the literal can start at
	for from <= last {
		p := s.rareAt(from + r)
		if p < 0 || p-r > last {
			return -1
		}
		start := p - r
		if m.litAt(s.data[start : start+n]) {
			return start
		}
		from = start + 1
	}
	return -1
}

// rareAt returns the first offset at or after at that holds a form of the
// rare byte, or -1.
func (s *litScan) rareAt(at int) int {
	best := -1
	for k := range s.m.forms {
		if s.next[k] != -1 && s.next[k] < at {
			if i := bytes.IndexByte(s.data[at:], s.m.rareForm[k]); i < 0 {
				s.next[k] = -1
			} else {
				s.next[k] = at + i
			}
		}
		if p := s.next[k]; p >= 0 && (best < 0 || p < best) {
			best = p
		}
	}
	return best
}

// litAt reports whether w, as long as the literal, is the literal.
func (m *grepMatcher) litAt(w []byte) bool {
	if !m.fold {
		return bytes.Equal(w, m.lit)
	}
	for i, c := range w {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != m.lit[i] {
			return false
		}
	}
	return true
}

// indexByPair is index for a plan that tests a pair of bytes: it loads
// the eight bytes at each offset of the pair and marks the positions where
// both are right, with the zero-byte trick of "Bit Twiddling Hacks" (which
// marks every zero byte, and at times the byte above one, a false alarm
// that the comparison weeds out).
func (s *litScan) indexByPair(from int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	m, data := s.m, s.data
	n := len(m.lit)
	last := len(data) - n
	a, b := m.pair[0], m.pair[1]
	maskA, byteA, maskB, byteB := m.pairMask[0], m.pairByte[0], m.pairMask[1], m.pairByte[1]
	i := from
	for ; i+b+32 <= len(data); i += 32 {
		// Thirty-two positions a round: four words at each offset.
		da, db := data[i+a:i+a+32], data[i+b:i+b+32]
		x0 := binary.LittleEndian.Uint64(da) | maskA ^ byteA
		x1 := binary.LittleEndian.Uint64(da[8:]) | maskA ^ byteA
		x2 := binary.LittleEndian.Uint64(da[16:]) | maskA ^ byteA
		x3 := binary.LittleEndian.Uint64(da[24:]) | maskA ^ byteA
		y0 := binary.LittleEndian.Uint64(db) | maskB ^ byteB
		y1 := binary.LittleEndian.Uint64(db[8:]) | maskB ^ byteB
		y2 := binary.LittleEndian.Uint64(db[16:]) | maskB ^ byteB
		y3 := binary.LittleEndian.Uint64(db[24:]) | maskB ^ byteB
		f0 := (x0 - lo) &^ x0 & (y0 - lo) &^ y0
		f1 := (x1 - lo) &^ x1 & (y1 - lo) &^ y1
		f2 := (x2 - lo) &^ x2 & (y2 - lo) &^ y2
		f3 := (x3 - lo) &^ x3 & (y3 - lo) &^ y3
		if (f0|f1|f2|f3)&hi == 0 {
			continue
		}
		for k, found := range [4]uint64{f0 & hi, f1 & hi, f2 & hi, f3 & hi} {
			for found != 0 {
				at := i + 8*k + bits.TrailingZeros64(found)/8
				if at <= last && m.litAt(data[at:at+n]) {
					return at
				}
				found &= found - 1
			}
		}
	}
	for ; i <= last; i++ {
		if m.litAt(data[i : i+n]) {
			return i
		}
	}
	return -1
}
