package anthropic

import (
	"unsafe"

	"github.com/agentloop/agentloop/model"
)

// msgSnap records a message as a history encoded it, to tell whether a
// later request sends it unchanged ([msgSnap.matches]). It answers as
// [sameContents] would against a deep copy of the blocks, but holds only
// the fields a block sets: a deep copy keeps a whole [model.Content] (256
// bytes) for each block, most of it empty fields, and a history keeps one
// per block of every message it holds.
//
// marks has one word per list of blocks and per block, in the order a
// depth-first walk meets them: the message's own list first (snapList),
// then each block (snapBlock) followed by its nested blocks. strs has the
// values of the fields a block's word says it sets, in snapField order.
// Strings are shared with the message (they cannot change); Input and raw
// JSON are copied, except a sealed block's JSON, which never changes and
// is shared.
type msgSnap struct {
	role  string
	marks []uint64
	strs  []string
}

// The bits of a block's word: which fields are set (a string non-empty, a
// slice or pointer non-nil), and for IsError its value. A list's word
// and a block's fBlocks bit carry the list's length in the high 32 bits.
// The first numStringFields bits are the string fields' (stringField).
const (
	fInput  uint64 = 1 << (numStringFields + iota) // Input non-nil; its bytes
	fRaw                                           // Raw non-nil; its bytes
	fSource                                        // Source non-nil; its Type, MediaType, Data and URL
	fCache                                         // CacheControl non-nil; its Type and TTL
	fIsError
	fIsErrorTrue
	fBlocks // a non-nil list (a block's Blocks, or the message's content)
)

// numStringFields is how many string fields a block has (stringField).
const numStringFields = 9

// stringField returns a block's i-th string field, in the order strs holds
// them; its bit is 1<<i.
func stringField(b *model.Content, i int) string {
	switch i {
	case 0:
		return b.Type
	case 1:
		return b.Text
	case 2:
		return b.Thinking
	case 3:
		return b.Signature
	case 4:
		return b.Data
	case 5:
		return b.ID
	case 6:
		return b.Name
	case 7:
		return b.ToolUseID
	default:
		return b.ToolName
	}
}

// listWord is the word of a list of blocks.
func listWord(blocks []model.Content) uint64 {
	w := uint64(len(blocks)) << 32
	if blocks != nil {
		w |= fBlocks
	}
	return w
}

// blockWord is the word of block b; noCache leaves its CacheControl out
// (a breakpoint spliced, not encoded). It also returns how many strings
// the block's fields put in strs.
func blockWord(b *model.Content, noCache bool) (uint64, int) {
	w, n := uint64(0), 0
	for i := range numStringFields {
		if stringField(b, i) != "" {
			w |= 1 << i
			n++
		}
	}
	if b.Input != nil {
		w |= fInput
		n++
	}
	if b.Raw != nil {
		w |= fRaw
		n++
	}
	if b.Source != nil {
		w |= fSource
		n += 4
	}
	if b.CacheControl != nil && !noCache {
		w |= fCache
		n += 2
	}
	if b.IsError != nil {
		w |= fIsError
		if *b.IsError {
			w |= fIsErrorTrue
		}
	}
	if b.Blocks != nil {
		w |= fBlocks | uint64(len(b.Blocks))<<32
	}
	return w, n
}

// snapMessage records m as encoded; cutLast leaves out its last block's
// breakpoint. The slices are allocated at their final size.
func snapMessage(m *model.Message, cutLast bool) msgSnap {
	words, strs := 1, 0
	countSnap(m.Content, cutLast, &words, &strs)
	s := msgSnap{role: m.Role, marks: make([]uint64, 0, words)}
	if strs > 0 {
		s.strs = make([]string, 0, strs)
	}
	s.marks = append(s.marks, listWord(m.Content))
	s.addBlocks(m.Content, cutLast)
	return s
}

func countSnap(blocks []model.Content, cutLast bool, words, strs *int) {
	for i := range blocks {
		_, n := blockWord(&blocks[i], cutLast && i == len(blocks)-1)
		*words++
		*strs += n
		countSnap(blocks[i].Blocks, false, words, strs)
	}
}

func (s *msgSnap) addBlocks(blocks []model.Content, cutLast bool) {
	for i := range blocks {
		b := &blocks[i]
		noCache := cutLast && i == len(blocks)-1
		w, _ := blockWord(b, noCache)
		s.marks = append(s.marks, w)
		for i := range numStringFields {
			if v := stringField(b, i); v != "" {
				s.strs = append(s.strs, v)
			}
		}
		if b.Input != nil {
			s.strs = append(s.strs, string(b.Input))
		}
		if b.Raw != nil {
			if b.Sealed() { // never changed once sealed: shared
				s.strs = append(s.strs, unsafe.String(unsafe.SliceData(b.Raw), len(b.Raw)))
			} else {
				s.strs = append(s.strs, string(b.Raw))
			}
		}
		if src := b.Source; src != nil {
			s.strs = append(s.strs, src.Type, src.MediaType, src.Data, src.URL)
		}
		if cc := b.CacheControl; cc != nil && !noCache {
			s.strs = append(s.strs, cc.Type, cc.TTL)
		}
		s.addBlocks(b.Blocks, false)
	}
}

// matches reports whether m encodes as the message s records did (the
// last block's breakpoint left out when cutLast is set): what
// [sameContents] reports for m's blocks and a deep copy of the recorded
// ones.
func (s *msgSnap) matches(m *model.Message, cutLast bool) bool {
	if s.role != m.Role || len(s.marks) == 0 || s.marks[0] != listWord(m.Content) {
		return false
	}
	c := snapCursor{s: s, m: 1}
	return c.blocks(m.Content, cutLast) && c.m == len(s.marks) && c.k == len(s.strs)
}

// snapCursor walks a msgSnap's marks (m) and strs (k) in step with the
// blocks compared.
type snapCursor struct {
	s    *msgSnap
	m, k int
}

func (c *snapCursor) blocks(blocks []model.Content, cutLast bool) bool {
	for i := range blocks {
		if !c.block(&blocks[i], cutLast && i == len(blocks)-1) {
			return false
		}
	}
	return true
}

// same reports whether the next recorded string is v, and moves past it.
func (c *snapCursor) same(v string) bool {
	if c.k >= len(c.s.strs) {
		return false
	}
	c.k++
	return c.s.strs[c.k-1] == v
}

// sameBytes is same for bytes (without copying them).
func (c *snapCursor) sameBytes(v []byte) bool {
	if c.k >= len(c.s.strs) {
		return false
	}
	c.k++
	return c.s.strs[c.k-1] == string(v)
}

func (c *snapCursor) block(b *model.Content, noCache bool) bool {
	if c.m >= len(c.s.marks) {
		return false
	}
	w := c.s.marks[c.m]
	c.m++
	// Every bit of w is checked against b, as blockWord would set it, the
	// values read as their bits say: one pass, in strs order.
	if !(c.str(w, 0, b.Type) && c.str(w, 1, b.Text) && c.str(w, 2, b.Thinking) &&
		c.str(w, 3, b.Signature) && c.str(w, 4, b.Data) && c.str(w, 5, b.ID) &&
		c.str(w, 6, b.Name) && c.str(w, 7, b.ToolUseID) && c.str(w, 8, b.ToolName) &&
		c.bytes(w, fInput, b.Input) && c.bytes(w, fRaw, b.Raw)) {
		return false
	}
	if src := b.Source; (w&fSource != 0) != (src != nil) ||
		src != nil && !(c.same(src.Type) && c.same(src.MediaType) && c.same(src.Data) && c.same(src.URL)) {
		return false
	}
	cc := b.CacheControl
	if noCache {
		cc = nil
	}
	if (w&fCache != 0) != (cc != nil) || cc != nil && !(c.same(cc.Type) && c.same(cc.TTL)) {
		return false
	}
	var rest uint64
	if b.IsError != nil {
		rest |= fIsError
		if *b.IsError {
			rest |= fIsErrorTrue
		}
	}
	if b.Blocks != nil {
		rest |= fBlocks | uint64(len(b.Blocks))<<32
	}
	if w&(fIsError|fIsErrorTrue|fBlocks|0xffffffff<<32) != rest {
		return false
	}
	return c.blocks(b.Blocks, false)
}

// str checks a string field whose bit in w is bit i.
func (c *snapCursor) str(w uint64, i uint, v string) bool {
	if w>>i&1 == 0 {
		return v == ""
	}
	return v != "" && c.same(v)
}

// bytes checks Input or Raw, whose bit in w is bit (set when non-nil).
func (c *snapCursor) bytes(w, bit uint64, v []byte) bool {
	if w&bit == 0 {
		return v == nil
	}
	return v != nil && c.sameBytes(v)
}
