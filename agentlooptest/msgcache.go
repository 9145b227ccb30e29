package agentlooptest

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

	"github.com/agentloop/agentloop/internal/jsonscan"
	"github.com/agentloop/agentloop/model"
)

// The message cache.
//
// Each request of an agent session repeats the whole history of the
// previous one, byte for byte except for the last message or two (the
// prompt-caching breakpoint moves), so a server decodes most messages
// several times. The fast path splits the messages array into its
// elements without decoding them and decodes each element through a cache
// keyed by its exact bytes: a message is decoded once per distinct byte
// string while it stays in the cache. Decoding an element on its own gives
// what decoding it inside the array gives (encoding/json decodes every
// element of a new slice into a zero value), so the request is the one
// decodeParams returns.
//
// Every request gets its own copy of its messages (see cloneMessages): the
// cached values are never handed out.

// DefaultMessageCacheBytes is the message cache's bound when
// [ServerOptions.MessageCacheBytes] is zero.
const DefaultMessageCacheBytes = 64 << 20

// msgShards is the number of independently locked parts of a message
// cache; a message's hash picks its shard.
const msgShards = 32

// msgSample is how many entries an eviction compares by default.
const msgSample = 4

// msgCache holds decoded messages by their exact bytes, bounded by the
// total length of those bytes. The zero value is a cache of
// DefaultMessageCacheBytes; safe for concurrent use.
//
// The cache is split in msgShards shards, each with its own lock and a
// 1/msgShards share of the bound; a message's hash picks its shard, and a
// message longer than a shard's share is decoded but not kept. Keys count
// against the bound; the decoded values are not counted (they take about
// as much again, strings being copies).
//
// To make room, a shard evicts the least recently used of a few entries
// (msgSample) in a row of its list of entries from a random place, rather
// than its least recently used entry. When the sessions in flight repeat
// more messages than the cache holds, they take turns, and true LRU
// evicts most messages just before their session sends them again;
// sampling keeps more of them, at the price of a few hits when the cache
// almost holds them all. BenchmarkDecodeInterleaved (500 sessions, about
// 9 MB of history) measured hit ratios, of 0.694 possible, for LRU and
// samples of 4 and 1 (random): 0.694, 0.676, 0.630 with a 16 MiB bound;
// 0.518, 0.525, 0.465 with 8 MiB; 0.090, 0.140, 0.225 with 4 MiB; 0.019,
// 0.025, 0.068 with 2 MiB. Hits also cost less than with a list: a
// counter's store instead of two unlinks and links. With a sample of two
// or more, an eviction never takes the shard's most recently used entry
// (such as the one just stored).
type msgCache struct {
	// limit is the bound in bytes of keys: 0 means
	// DefaultMessageCacheBytes, negative turns the cache off. Set it
	// before the first use.
	limit int
	// sample is the number of entries an eviction compares: 0 means
	// msgSample; a number as large as the shards' entries gives LRU. Set
	// it before the first use.
	sample int
	shards [msgShards]msgShard
}

type msgShard struct {
	mu      sync.Mutex
	entries map[uint64]*msgEntry // by hash; entries of equal hashes chained by next
	all     []*msgEntry          // every entry, in no order; entry.idx is its index
	clock   uint64               // counts lookups and stores; entry.used is the last one to find it
	rand    uint64               // state of the shard's random numbers
	bytes   int                  // total len(raw) of the entries
	// hits and misses count lookups that found and did not find an entry;
	// a test hook.
	hits, misses int
	_            [64]byte
}

// msgEntry is one decoded message. sum, raw and msg never change after the
// entry is stored; msg's strings and slices point into memory of its own
// (decoded from raw, which is a private copy).
type msgEntry struct {
	sum  uint64
	raw  []byte
	msg  model.Message
	next *msgEntry // same sum
	used uint64    // the shard's clock when last found or stored
	idx  int       // in the shard's all
}

var msgSeed = maphash.MakeSeed()

// bound returns the cache's bound in bytes, or 0 if it is off.
func (c *msgCache) bound() int {
	switch {
	case c.limit == 0:
		return DefaultMessageCacheBytes
	case c.limit < 0:
		return 0
	}
	return c.limit
}

// message returns the cached decoding of raw, a JSON object, decoding and
// storing it on a miss (with its unmarked form, see "The breakpoint's
// move"), or false if raw does not decode as a model.Message. The returned
// value belongs to the cache: the caller must copy it before handing it
// out.
func (c *msgCache) message(raw []byte) (*model.Message, bool) {
	shardMax := c.bound() / msgShards
	if len(raw) > shardMax {
		var m model.Message
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		return &m, true
	}
	sum := maphash.Bytes(msgSeed, raw)
	sh := &c.shards[sum>>59%msgShards]
	if e := sh.lookup(sum, raw); e != nil {
		return &e.msg, true
	}
	e := &msgEntry{sum: sum, raw: bytes.Clone(raw)}
	if json.Unmarshal(e.raw, &e.msg) != nil {
		return nil, false
	}
	sample := c.sample
	if sample <= 0 {
		sample = msgSample
	}
	sh.store(e, shardMax, sample)
	if marked(&e.msg) {
		if raw, m, ok := unmarked(e.raw, &e.msg); ok {
			u := &msgEntry{sum: maphash.Bytes(msgSeed, raw), raw: raw, msg: m}
			c.shards[u.sum>>59%msgShards].store(u, shardMax, sample)
		}
	}
	return &e.msg, true
}

// marked reports whether a block of m has a cache_control breakpoint.
func marked(m *model.Message) bool {
	for i := range m.Content {
		if m.Content[i].CacheControl != nil {
			return true
		}
	}
	return false
}

// lookup returns the entry for raw and marks it used, or returns nil.
func (sh *msgShard) lookup(sum uint64, raw []byte) *msgEntry {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for e := sh.entries[sum]; e != nil; e = e.next {
		if bytes.Equal(e.raw, raw) {
			sh.hits++
			sh.clock++
			e.used = sh.clock
			return e
		}
	}
	sh.misses++
	return nil
}

// store adds e, unless an entry of the same bytes arrived meanwhile, then
// evicts entries until the shard holds at most max bytes, each the least
// recently used of sample entries in a row of sh.all from a random place.
func (sh *msgShard) store(e *msgEntry, max, sample int) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.entries == nil {
		sh.entries = make(map[uint64]*msgEntry)
		sh.rand = e.sum | 1
	}
	for o := sh.entries[e.sum]; o != nil; o = o.next {
		if bytes.Equal(o.raw, e.raw) {
			return
		}
	}
	sh.clock++
	e.used = sh.clock
	e.next = sh.entries[e.sum]
	sh.entries[e.sum] = e
	e.idx = len(sh.all)
	sh.all = append(sh.all, e)
	sh.bytes += len(e.raw)
	for sh.bytes > max {
		n := len(sh.all)
		// xorshift64
		sh.rand ^= sh.rand << 13
		sh.rand ^= sh.rand >> 7
		sh.rand ^= sh.rand << 17
		start := int(sh.rand % uint64(n))
		var victim *msgEntry
		for k := range min(sample, n) {
			o := sh.all[(start+k)%n]
			if victim == nil || o.used < victim.used {
				victim = o
			}
		}
		sh.evict(victim)
	}
}

// evict removes e from the shard.
func (sh *msgShard) evict(e *msgEntry) {
	last := sh.all[len(sh.all)-1]
	sh.all[e.idx], last.idx = last, e.idx
	sh.all[len(sh.all)-1] = nil
	sh.all = sh.all[:len(sh.all)-1]
	sh.bytes -= len(e.raw)
	p := sh.entries[e.sum]
	if p == e {
		if e.next == nil {
			delete(sh.entries, e.sum)
		} else {
			sh.entries[e.sum] = e.next
		}
		return
	}
	for p.next != e {
		p = p.next
	}
	p.next = e.next
}

// stats returns the hits and misses of all lookups so far, and the number
// and total bytes of the entries held; for tests.
func (c *msgCache) stats() (hits, misses, entries, size int) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		hits += sh.hits
		misses += sh.misses
		size += sh.bytes
		for _, e := range sh.entries {
			for ; e != nil; e = e.next {
				entries++
			}
		}
		sh.mu.Unlock()
	}
	return
}

// decodeMessages decodes raw, a JSON array of messages, element by element
// through the cache, into a new slice of copies. It reports false when raw
// is not an array of objects with valid punctuation or an element does not
// decode. When it reports true, the slice is what encoding/json gives for
// raw: json checks each element the cache decodes, this function the
// array's own punctuation, and an empty array gives an empty, non-nil
// slice.
func (c *msgCache) decodeMessages(raw []byte) ([]model.Message, bool) {
	var buf [64]*model.Message
	msgs := buf[:0]
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	i = jsonscan.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		if jsonscan.SkipSpace(raw, i+1) != len(raw) {
			return nil, false
		}
		return []model.Message{}, true
	}
	for {
		if i >= len(raw) || raw[i] != '{' {
			return nil, false
		}
		end, ok := jsonscan.ValueEnd(raw, i)
		if !ok {
			return nil, false
		}
		m, ok := c.message(raw[i:end])
		if !ok {
			return nil, false
		}
		msgs = append(msgs, m)
		i = jsonscan.SkipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == ']' {
			if jsonscan.SkipSpace(raw, i+1) != len(raw) {
				return nil, false
			}
			return cloneMessages(msgs), true
		}
		if raw[i] != ',' {
			return nil, false
		}
		i = jsonscan.SkipSpace(raw, i+1)
	}
}

// cloneMessages copies the messages so that nothing a caller can change
// through the copy is shared with the originals or with another copy: the
// Message structs, their Content slices (and tool_result Blocks, at any
// depth), the Source, CacheControl and IsError values and the bytes of
// Input and Raw. Only strings, which cannot change, are shared. The
// copies' slices are carved out of a few allocations for the whole
// request, each with its capacity cut to its length so that an append
// to one reallocates instead of overwriting the next.
func cloneMessages(src []*model.Message) []model.Message {
	blocks, nbytes := 0, 0
	for _, m := range src {
		b, n := countContent(m.Content)
		blocks += b
		nbytes += n
	}
	a := cloneArena{
		content: make([]model.Content, blocks),
		bytes:   make([]byte, nbytes),
	}
	out := make([]model.Message, len(src))
	for i, m := range src {
		out[i] = model.Message{Role: m.Role, Content: a.contents(m.Content)}
	}
	return out
}

// cloneContent copies blocks as cloneMessages copies a message's.
func cloneContent(s []model.Content) []model.Content {
	blocks, nbytes := countContent(s)
	a := cloneArena{content: make([]model.Content, blocks), bytes: make([]byte, nbytes)}
	return a.contents(s)
}

// countContent returns the number of blocks in s and in their Blocks, at
// any depth, and the total length of their Input and Raw.
func countContent(s []model.Content) (blocks, nbytes int) {
	blocks = len(s)
	for i := range s {
		nbytes += len(s[i].Input) + len(s[i].Raw)
		if s[i].Blocks != nil {
			b, n := countContent(s[i].Blocks)
			blocks += b
			nbytes += n
		}
	}
	return blocks, nbytes
}

// cloneArena hands out the memory of one cloneMessages call.
type cloneArena struct {
	content []model.Content
	bytes   []byte
}

// contents copies s deeply, keeping nil nil and empty empty.
func (a *cloneArena) contents(s []model.Content) []model.Content {
	if s == nil {
		return nil
	}
	if len(s) == 0 {
		return []model.Content{}
	}
	out := a.content[:len(s):len(s)]
	a.content = a.content[len(s):]
	copy(out, s)
	for i := range out {
		c := &out[i]
		c.Input = a.raw(c.Input)
		c.Raw = a.raw(c.Raw)
		if c.Blocks != nil {
			c.Blocks = a.contents(c.Blocks)
		}
		if c.IsError != nil {
			v := *c.IsError
			c.IsError = &v
		}
		if c.Source != nil {
			v := *c.Source
			c.Source = &v
		}
		if c.CacheControl != nil {
			v := *c.CacheControl
			c.CacheControl = &v
		}
	}
	return out
}

// raw copies b, keeping nil nil and empty empty.
func (a *cloneArena) raw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return json.RawMessage{}
	}
	out := a.bytes[:len(b):len(b)]
	a.bytes = a.bytes[len(b):]
	copy(out, b)
	return out
}

// The breakpoint's move.
//
// A client marks the last block of its last message with cache_control
// and, in its next request, sends that message again without the mark; so
// most messages would be decoded twice, once with the mark and once
// without. When the cache decodes a message with one marked block, it
// also stores the message without the mark under the bytes the client
// will send for it: the message's bytes less the block's cache_control
// member, with the comma before it. Decoding those bytes would give the
// same message with a nil CacheControl on that block, as long as the key
// is the only one of the block that encoding/json matches to
// cache_control, no key of the message or block is escaped, the block's
// type is one Content models (not kept whole in Raw), and "content" is
// the only key of the message that matches Content.

// objMember is one member of a JSON object: its key (without quotes, never
// holding a backslash) and where its value and the member end.
type objMember struct {
	key     []byte
	start   int // the key's opening quote
	prevEnd int // the end of the previous member's value, or 0 for the first member
	vstart  int // the value
	vend    int
}

// objMembers splits b, a JSON object, into its members without decoding
// their values; it reports false for a key with escapes. It checks the
// object's own punctuation; each value's extent is found by bracket and
// string matching and is checked later by whoever decodes it.
func objMembers(b []byte, out []objMember) ([]objMember, bool) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, jsonscan.SkipSpace(b, i+1) == len(b)
	}
	prevEnd := 0
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' || b[end] < 0x20 {
				return nil, false
			}
			end++
		}
		if end >= len(b) {
			return nil, false
		}
		m := objMember{key: b[i+1 : end], start: i, prevEnd: prevEnd}
		i = jsonscan.SkipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		m.vstart = jsonscan.SkipSpace(b, i+1)
		var ok bool
		if m.vend, ok = jsonscan.ValueEnd(b, m.vstart); !ok {
			return nil, false
		}
		out = append(out, m)
		prevEnd = m.vend
		i = jsonscan.SkipSpace(b, m.vend)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return out, jsonscan.SkipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// unmarked returns the bytes of raw, a message that decoded as m, without
// the cache_control member of its one marked block, and m without that
// mark; or false when raw is not a message whose mark it can be sure to
// remove so (see "The breakpoint's move").
func unmarked(raw []byte, m *model.Message) ([]byte, model.Message, bool) {
	var buf [8]objMember
	members, ok := objMembers(raw, buf[:0])
	if !ok {
		return nil, model.Message{}, false
	}
	content := -1
	for n, f := range members {
		if bytes.EqualFold(f.key, []byte("content")) {
			if content >= 0 || string(f.key) != "content" {
				return nil, model.Message{}, false
			}
			content = n
		}
	}
	if content < 0 || raw[members[content].vstart] != '[' {
		return nil, model.Message{}, false
	}
	// Find the blocks in the content array.
	arr := raw[:members[content].vend]
	i := jsonscan.SkipSpace(arr, members[content].vstart+1)
	marked, cut, cutEnd := -1, 0, 0
	var bbuf [16]objMember
	for block := 0; i < len(arr) && arr[i] != ']'; block++ {
		end, ok := jsonscan.ValueEnd(arr, i)
		if !ok || arr[i] != '{' || block >= len(m.Content) {
			return nil, model.Message{}, false
		}
		fields, ok := objMembers(arr[i:end], bbuf[:0])
		if !ok {
			return nil, model.Message{}, false
		}
		for _, f := range fields {
			if !bytes.EqualFold(f.key, []byte("cache_control")) {
				continue
			}
			if marked >= 0 || string(f.key) != "cache_control" || f.prevEnd == 0 {
				return nil, model.Message{}, false
			}
			marked, cut, cutEnd = block, i+f.prevEnd, i+f.vend
		}
		i = jsonscan.SkipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = jsonscan.SkipSpace(arr, i+1)
		}
	}
	if marked < 0 {
		return nil, model.Message{}, false
	}
	c := m.Content[marked]
	if c.CacheControl == nil || c.Raw != nil {
		return nil, model.Message{}, false
	}
	out := make([]byte, 0, len(raw)-(cutEnd-cut))
	out = append(append(out, raw[:cut]...), raw[cutEnd:]...)
	um := model.Message{Role: m.Role, Content: cloneNil(m.Content)}
	um.Content[marked].CacheControl = nil
	return out, um, true
}
