package anthropic

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/agentloop/agentloop/model"
)

// msgCache keeps the JSON of messages already encoded, so that the history a
// session sends again with every request is encoded once, not once per
// turn. It is safe for concurrent use.
//
// An entry is keyed by the identity of the message's content array (a weak
// pointer to its first block, and its length) and lives as long as that
// array: a cleanup drops it when the array is collected, so a finished
// session's entries go with its history. The key only finds the entry;
// whether it is served is decided by comparing the message with a deep
// copy of what was encoded, field by field. Strings the two share compare
// in constant time, so for an unchanged message the check is cheap, and a
// message changed in place in any way (a block replaced, a field
// reassigned, a cache breakpoint added or removed, raw JSON edited) does
// not match and is encoded afresh. Serving stale bytes would take changing
// a string's bytes through unsafe.
type msgCache struct {
	m sync.Map // msgKey → *msgEntry
}

type msgKey struct {
	first weak.Pointer[model.Content]
	n     int
}

type msgEntry struct {
	role   string
	blocks []model.Content // deep copy of the content encoded (strings shared)
	json   []byte          // never modified
}

// minCachedMessage is how many bytes of text a message must hold for an
// entry: below it, encoding again costs about what the entry does.
const minCachedMessage = 256

// worthCaching reports whether blocks hold at least minCachedMessage bytes
// of text, data and raw JSON.
func worthCaching(blocks []model.Content) bool { return textSize(blocks, 0) >= minCachedMessage }

// textSize adds the sizes of the blocks' texts to n, stopping once it
// reaches minCachedMessage.
func textSize(blocks []model.Content, n int) int {
	for i := 0; i < len(blocks) && n < minCachedMessage; i++ {
		b := &blocks[i]
		n += len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.Input) + len(b.Raw)
		if b.Source != nil {
			n += len(b.Source.Data)
		}
		n = textSize(b.Blocks, n)
	}
	return n
}

// appendMessage gives m's JSON: the bytes the cache keeps for it, as kept
// (to be shared, never modified), or else appended to dst. When store is
// set, a message not in the cache is added to it, and its kept bytes are
// returned rather than appended.
func (c *msgCache) appendMessage(dst []byte, m *model.Message, store bool) (out, kept []byte, err error) {
	if !worthCaching(m.Content) {
		out, err = m.AppendJSON(dst)
		return out, nil, err
	}
	k := msgKey{first: weak.Make(&m.Content[0]), n: len(m.Content)}
	if v, ok := c.m.Load(k); ok {
		e := v.(*msgEntry)
		if e.role == m.Role && sameContents(e.blocks, m.Content) {
			return dst, e.json, nil
		}
	}
	start := len(dst)
	out, err = m.AppendJSON(dst)
	if err != nil || !store {
		return out, nil, err
	}
	e := &msgEntry{role: m.Role, blocks: deepCopy(m.Content), json: slices.Clip(slices.Clone(out[start:]))}
	if _, loaded := c.m.Swap(k, e); !loaded {
		runtime.AddCleanup(&m.Content[0], c.drop, k)
	}
	return out[:start], e.json, nil
}

// drop removes the entry of a collected content array.
func (c *msgCache) drop(k msgKey) { c.m.Delete(k) }

// len counts the entries (for tests).
func (c *msgCache) len() int {
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	return n
}

// deepCopy copies blocks with everything they point to that could be
// changed in place: raw JSON, nested blocks, pointed-to values. Strings are
// shared.
func deepCopy(blocks []model.Content) []model.Content {
	if blocks == nil {
		return nil
	}
	out := make([]model.Content, len(blocks))
	for i, b := range blocks {
		b.Input = slices.Clone(b.Input)
		if !b.Sealed() { // a sealed block's JSON never changes
			b.Raw = slices.Clone(b.Raw)
		}
		b.Blocks = deepCopy(b.Blocks)
		b.IsError = clonePtr(b.IsError)
		b.Source = clonePtr(b.Source)
		b.CacheControl = clonePtr(b.CacheControl)
		out[i] = b
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameContents reports whether two block lists encode alike: every field
// of [model.Content] equal, recursively. contentFields in the tests fails
// when Content gains a field this does not compare.
func sameContents(a, b []model.Content) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Type != y.Type || x.Text != y.Text || x.Thinking != y.Thinking || x.Signature != y.Signature ||
			x.Data != y.Data || x.ID != y.ID || x.Name != y.Name || x.ToolUseID != y.ToolUseID || x.ToolName != y.ToolName ||
			!bytes.Equal(x.Input, y.Input) || (x.Input == nil) != (y.Input == nil) ||
			!bytes.Equal(x.Raw, y.Raw) || (x.Raw == nil) != (y.Raw == nil) ||
			!samePtr(x.IsError, y.IsError) || !samePtr(x.Source, y.Source) || !samePtr(x.CacheControl, y.CacheControl) ||
			!sameContents(x.Blocks, y.Blocks) {
			return false
		}
	}
	return true
}
