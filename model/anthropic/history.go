package anthropic

import (
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/model"
)

// history is what a session's [model.Memo] keeps between two requests:
// the JSON of the messages the last request sent, joined by commas in one
// buffer, and a deep copy of each message encoded, to tell whether the
// next request sends it unchanged. A request whose history starts with
// the same messages (the common case: the last request's, plus a reply
// and a tool result) reuses their bytes as one segment of its body and
// encodes only the messages after them, each once; the last message's
// cache breakpoint is spliced onto its bytes, not encoded with them, so
// the message is reused as it is when the breakpoint moves on.
//
// The bytes of buf up to its length are never written again: bodies of
// earlier requests, perhaps still being sent, share them. New messages
// are appended past the length; a history that differs earlier on
// (compaction, /clear, a rewind, a message edited in place) starts a new
// buffer.
type history struct {
	buf  []byte
	ends []int // ends[i]: the length of buf after message i
	msgs []histMsg
	// encoded counts the messages encoded (for the tests).
	encoded int
}

// histMsg is a message as encoded: its role and a deep copy of its
// blocks, the last block's breakpoint left out when it was spliced.
type histMsg struct {
	role   string
	blocks []model.Content
}

// matches reports whether m encodes as h.msgs[i] did, leaving out the
// breakpoint of m's last block when cut is set.
func (h *history) matches(i int, m *model.Message, cut bool) bool {
	e := &h.msgs[i]
	if e.role != m.Role || len(e.blocks) != len(m.Content) || (e.blocks == nil) != (m.Content == nil) {
		return false
	}
	if !cut {
		return sameContents(e.blocks, m.Content)
	}
	n := len(m.Content) - 1
	last := m.Content[n]
	last.CacheControl = nil
	return sameContents(e.blocks[:n], m.Content[:n]) && sameContents(e.blocks[n:], []model.Content{last})
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
		// The history changed before what h kept ended: start a new
		// buffer, so that bodies sharing the old one keep their bytes.
		end := 0
		if same > 0 {
			end = h.ends[same-1]
		}
		*h = history{
			buf:     slices.Clone(h.buf[:end]),
			ends:    slices.Clone(h.ends[:same]),
			msgs:    slices.Clone(h.msgs[:same]),
			encoded: h.encoded,
		}
	}
	for i := same; i < keep; i++ {
		start := len(h.buf)
		if i > 0 {
			h.buf = append(h.buf, ',')
		}
		m := &msgs[i]
		blocks := deepCopy(m.Content)
		enc := m
		if cut && i == n-1 {
			blocks[len(blocks)-1].CacheControl = nil
			enc = &model.Message{Role: m.Role, Content: blocks}
		}
		var err error
		if h.buf, err = enc.AppendJSON(h.buf); err != nil {
			h.truncate(i, start)
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		h.encoded++
		h.ends = append(h.ends, len(h.buf))
		h.msgs = append(h.msgs, histMsg{role: m.Role, blocks: blocks})
	}
	if !cut {
		bb.share(len(b), h.buf)
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
	bb.share(len(b), h.buf[:len(h.buf)-len(msgTail)])
	b = append(b, `,"cache_control":`...)
	b = msgs[n-1].Content[len(msgs[n-1].Content)-1].CacheControl.AppendJSON(b)
	return append(b, msgTail...), nil
}

// truncate forgets message i and the ones after it, which start at byte
// start of buf; later appends overwrite only bytes no body has shared.
func (h *history) truncate(i, start int) {
	h.buf, h.ends, h.msgs = h.buf[:start], h.ends[:i], h.msgs[:i]
}
