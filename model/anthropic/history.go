package anthropic

import (
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// history is what a session's [model.Memo] keeps between two requests:
// the JSON of the messages the last request sent, joined by commas, and a
// snapshot of each message encoded ([msgSnap]: what a deep copy would tell,
// in the fields the message sets), to tell whether the next request sends
// it unchanged. A request whose history starts with the same
// messages (the common case: the last request's, plus a reply and a tool
// result) reuses their bytes as segments of its body and encodes only the
// messages after them, each once; the last message's cache breakpoint is
// spliced onto its bytes, not encoded with them, so the message is reused
// as it is when the breakpoint moves on.
//
// The JSON is kept in chunks of chunkSize bytes, each filled to its
// capacity and never reallocated: a message is encoded apart and copied
// into what is left of the last chunk, going on in new chunks as needed,
// so that a message may span chunks. So a growing history is never
// copied to grow, holds less than a chunk of spare capacity, and leaves
// no garbage of outgrown buffers. The bytes of a chunk up to its length are
// never written again: bodies of earlier requests, perhaps still being
// sent, share them. A history that differs earlier on (compaction,
// /clear, a rewind, a message edited in place) keeps the chunks before the
// difference, the one it falls in clipped at it, so that the next message
// starts a new chunk rather than overwrite shared bytes.
type history struct {
	chunks [][]byte
	starts []int     // starts[k]: the offset of chunks[k] in the history's JSON
	ends   []int     // ends[i]: the offset where message i's JSON ends
	msgs   []msgSnap // msgs[i]: message i as encoded (snapshot.go)
	// encoded counts the messages encoded (for the tests).
	encoded int
	// afterShared: the last chunk is a sealed block's JSON (shareSealed),
	// so the next chunk made is a small one.
	afterShared bool
}

// chunkSize is the capacity of a history's chunks: small, so that what a
// history holds beyond its JSON stays small (a thousand sessions hold a
// thousand last chunks), and a size class of the allocator, so that a
// chunk wastes nothing there either. A body shares a history as one
// segment per chunk, written with one vectored write.
const chunkSize = 4 << 10

// smallChunkSize is the capacity of the chunk made after a sealed block's.
const smallChunkSize = 1 << 10

// maxEncScratch is the largest encoding buffer encScratch keeps.
const maxEncScratch = 32 << 10

// size is the length of the history's JSON.
func (h *history) size() int {
	if len(h.chunks) == 0 {
		return 0
	}
	k := len(h.chunks) - 1
	return h.starts[k] + len(h.chunks[k])
}

// add appends enc (a message's JSON, with its leading comma) to the
// history: into what is left of the last chunk, then into new chunks. It
// returns the offset where enc ends.
func (h *history) add(enc []byte) int {
	for len(enc) > 0 {
		k := len(h.chunks) - 1
		if k < 0 || len(h.chunks[k]) == cap(h.chunks[k]) {
			size := chunkSize
			if h.afterShared {
				// What follows a sealed block until the next one is
				// mostly a reply and a message's start: a small chunk.
				size, h.afterShared = smallChunkSize, false
			}
			h.starts = append(h.starts, h.size())
			h.chunks = append(h.chunks, make([]byte, 0, size))
			k++
		}
		c := h.chunks[k]
		n := min(cap(c)-len(c), len(enc))
		h.chunks[k], enc = append(c, enc[:n]...), enc[n:]
	}
	return h.size()
}

// shareSealed adds enc, the JSON of a message so far, to the history and
// then a sealed block's JSON (raw) as a chunk of its own, not copied: the
// session's history holds those bytes already, and never changes them. It
// returns enc emptied, for the rest of the message.
func (h *history) shareSealed(enc, raw []byte) []byte {
	h.add(enc)
	if k := len(h.chunks) - 1; k >= 0 {
		// Later bytes go after raw, so nothing more goes in this chunk:
		// one mostly empty is copied to its length rather than kept.
		if c := h.chunks[k]; cap(c)-len(c) > len(c) {
			h.chunks[k] = append(make([]byte, 0, len(c)), c...)
		} else {
			h.chunks[k] = slices.Clip(c)
		}
	}
	h.starts = append(h.starts, h.size())
	h.chunks = append(h.chunks, slices.Clip(raw))
	h.afterShared = true
	return enc[:0]
}

// cutAt forgets the messages from same on: the chunks up to the offset
// where message same-1 ends are kept, the last of them clipped there.
func (h *history) cutAt(same int) {
	end := 0
	if same > 0 {
		end = h.ends[same-1]
	}
	k := len(h.chunks)
	for k > 0 && h.starts[k-1] >= end {
		k--
	}
	h.chunks, h.starts = slices.Clone(h.chunks[:k]), slices.Clone(h.starts[:k])
	if k > 0 {
		h.chunks[k-1] = slices.Clip(h.chunks[k-1][:end-h.starts[k-1]])
	}
	h.ends, h.msgs = slices.Clone(h.ends[:same]), slices.Clone(h.msgs[:same])
	h.afterShared = false
}

// share records in bb, at where, the history's JSON up to offset end.
func (h *history) share(bb *bodyBuilder, where, end int) {
	for k, c := range h.chunks {
		if h.starts[k] >= end {
			return
		}
		bb.share(where, c[:min(len(c), end-h.starts[k])])
	}
}

// encScratch holds the buffers messages are encoded in before they are
// copied into a history's chunk.
var encScratch = sync.Pool{New: func() any { return new([]byte) }}

// matches reports whether m encodes as h.msgs[i] did, leaving out the
// breakpoint of m's last block when cut is set.
func (h *history) matches(i int, m *model.Message, cut bool) bool {
	return h.msgs[i].matches(m, cut)
}

// cuttable reports whether m's breakpoint, on its last block, can be
// spliced: the message is encoded without it, so that the next request
// reuses its bytes.
func cuttable(m *model.Message) bool {
	n := len(m.Content)
	return n > 0 && m.Content[n-1].CacheControl != nil && m.Content[n-1].CacheControlLast()
}

// msgTail is how every message's JSON ends when its last block is one
// that [model.Content.CacheControlLast] accepts: the block's brace, the
// array's bracket, the message's brace.
const msgTail = "}]}"

// appendMessages writes msgs into bb after b (the body so far, ending with
// the messages array's opening bracket) using and updating h, and returns
// b with whatever follows the history's shared bytes (the last message's
// breakpoint, or the last message itself), without the closing bracket.
func (h *history) appendMessages(bb *bodyBuilder, b []byte, msgs []model.Message) ([]byte, error) {
	n := len(msgs)
	cut := cuttable(&msgs[n-1])
	// The messages h keeps: all of them, the last one too when its
	// breakpoint can be spliced.
	keep := n
	if !cut {
		keep = n - 1
	}
	same := 0
	for same < keep && same < len(h.msgs) && h.matches(same, &msgs[same], cut && same == n-1) {
		same++
	}
	if same < len(h.msgs) {
		// The history changed before what h kept ended.
		h.cutAt(same)
	}
	if same < keep {
		sp := encScratch.Get().(*[]byte)
		defer func() {
			if cap(*sp) <= maxEncScratch {
				encScratch.Put(sp)
			}
		}()
		for i := same; i < keep; i++ {
			enc := (*sp)[:0]
			if i > 0 {
				enc = append(enc, ',')
			}
			m := &msgs[i]
			em := m
			if cut && i == n-1 {
				blocks := slices.Clone(m.Content)
				blocks[len(blocks)-1].CacheControl = nil
				em = &model.Message{Role: m.Role, Content: blocks}
			}
			enc, err := em.AppendJSONShared(enc, h.shareSealed)
			*sp = enc
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			h.encoded++
			h.ends = append(h.ends, h.add(enc))
			h.msgs = append(h.msgs, snapMessage(m, cut && i == n-1))
		}
	}
	if !cut {
		h.share(bb, len(b), h.size())
		if n > 1 {
			b = append(b, ',')
		}
		m := &msgs[n-1]
		h.encoded++
		var err error
		if b, err = m.AppendJSON(b); err != nil {
			return nil, fmt.Errorf("message %d: %w", n-1, err)
		}
		return b, nil
	}
	h.share(bb, len(b), h.size()-len(msgTail))
	b = append(b, `,"cache_control":`...)
	b = msgs[n-1].Content[len(msgs[n-1].Content)-1].CacheControl.AppendJSON(b)
	return append(b, msgTail...), nil
}
