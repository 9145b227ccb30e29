package agentlooptest

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// The request decoder's cache.
//
// A client sends the same tools and system prompt with every request of a
// session, and every session of a program sends the same ones: decoding
// them is most of the cost of decoding a request (16 KB of tool schemas
// beside a few KB of messages for agentloop's default tools). The server
// keeps the decoded tools and system values of the last few distinct byte
// strings it saw and decodes only the rest of each body. The result is the
// same as decoding the whole body: a body whose shape the fast path is not
// sure of goes to the plain decoder, and a cached value is used only for
// bytes equal to those it was decoded from.

// sharedFields are the top-level fields decoded once per distinct value.
var sharedFields = [...]string{"tools", "system"}

// fieldCacheSize bounds the values kept per field: enough for the tool
// sets of a few kinds of session (main agent, subagents, helper calls).
const fieldCacheSize = 16

// fieldCache holds decoded values of one field by their exact bytes.
// Safe for concurrent use.
type fieldCache struct {
	mu      sync.Mutex
	entries []cachedField // most recently used last
}

type cachedField struct {
	sum   uint64
	raw   []byte
	tools []model.ToolDef
	sys   []model.Content
}

var fieldSeed = maphash.MakeSeed()

// lookup returns the entry for raw, or false.
func (c *fieldCache) lookup(sum uint64, raw []byte) (cachedField, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := c.entries[i]
		if e.sum == sum && bytes.Equal(e.raw, raw) {
			if i != len(c.entries)-1 {
				copy(c.entries[i:], c.entries[i+1:])
				c.entries[len(c.entries)-1] = e
			}
			return e, true
		}
	}
	return cachedField{}, false
}

// store keeps e, dropping the least recently used entry when full.
func (c *fieldCache) store(e cachedField) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == fieldCacheSize {
		copy(c.entries, c.entries[1:])
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(c.entries, e)
}

// decoder decodes request bodies, caching the shared fields and the
// messages (msgcache.go). The zero value is ready; safe for concurrent
// use.
type decoder struct {
	tools, system fieldCache
	msgs          msgCache
}

// decode decodes body as decodeParams does.
func (d *decoder) decode(body []byte) (model.Request, error) {
	if p, ok := d.fast(body); ok {
		return p, nil
	}
	return decodeParams(body)
}

// fast decodes body with the shared fields and the messages from the
// caches, or reports false when it cannot be sure of giving decodeParams's
// answer: a body that is not a plain JSON object of distinct keys without
// escapes, a key that differs from a shared field's name or "messages"
// only in case (encoding/json would match it), a system prompt given as a
// string, a messages array with an element that is not an object (or
// whose content is a string), or any part that does not decode.
func (d *decoder) fast(body []byte) (model.Request, bool) {
	fields, ok := topFields(body)
	if !ok {
		return model.Request{}, false
	}
	cacheMsgs := d.msgs.bound() > 0
	var messages []byte
	var shared [len(sharedFields)][]byte
	bp := restPool.Get().(*[]byte)
	defer restPool.Put(bp)
	rest := append((*bp)[:0], '{')
	for i, f := range fields {
		for j := i + 1; j < len(fields); j++ {
			if bytes.EqualFold(fields[j].key, f.key) {
				return model.Request{}, false
			}
		}
		k := -1
		for n, name := range sharedFields {
			if bytes.EqualFold(f.key, []byte(name)) {
				if string(f.key) != name {
					return model.Request{}, false
				}
				k = n
			}
		}
		if k >= 0 {
			shared[k] = f.raw
			continue
		}
		if cacheMsgs && bytes.EqualFold(f.key, []byte("messages")) {
			if string(f.key) != "messages" {
				return model.Request{}, false
			}
			if f.raw[0] == '[' {
				messages = f.raw
				continue
			}
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, '"')
		rest = append(rest, f.key...)
		rest = append(rest, '"', ':')
		rest = append(rest, f.raw...)
	}
	rest = append(rest, '}')
	*bp = rest
	var p model.Request
	if json.Unmarshal(rest, &p) != nil {
		return model.Request{}, false
	}
	if raw := shared[0]; raw != nil {
		e, ok := d.field(&d.tools, raw, false)
		if !ok {
			return model.Request{}, false
		}
		p.Tools = cloneNil(e.tools)
	}
	if raw := shared[1]; raw != nil {
		if raw[0] == '"' {
			return model.Request{}, false
		}
		e, ok := d.field(&d.system, raw, true)
		if !ok {
			return model.Request{}, false
		}
		p.System = cloneContent(e.sys)
	}
	if messages != nil {
		if p.Messages, ok = d.msgs.decodeMessages(messages); !ok {
			return model.Request{}, false
		}
	}
	return p, true
}

// field returns the decoded value of raw from c, decoding and storing it
// on a miss.
func (d *decoder) field(c *fieldCache, raw []byte, system bool) (cachedField, bool) {
	sum := maphash.Bytes(fieldSeed, raw)
	if e, ok := c.lookup(sum, raw); ok {
		return e, true
	}
	e := cachedField{sum: sum, raw: bytes.Clone(raw)}
	var err error
	if system {
		err = json.Unmarshal(raw, &e.sys)
	} else {
		err = json.Unmarshal(raw, &e.tools)
	}
	if err != nil {
		return cachedField{}, false
	}
	c.store(e)
	return e, true
}

// restPool holds the buffers the fast path rebuilds a body's other fields
// in; json.Unmarshal keeps no reference to its input.
var restPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// cloneNil copies s, keeping nil nil and empty empty, so that a test that
// changes a request's slice does not change another request's.
func cloneNil[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// topField is one member of a top-level JSON object.
type topField struct {
	key []byte // without quotes; never holds a backslash
	raw []byte // the value, as written
}

// topFields splits a JSON object into its members without decoding the
// values. It accepts only an object whose keys have no escapes, and checks
// the object's own punctuation; each value's extent is found by bracket
// and string matching and is checked later by whoever decodes it.
func topFields(b []byte) ([]topField, bool) {
	var buf [12]objMember
	members, ok := objMembers(b, buf[:0])
	if !ok {
		return nil, false
	}
	fields := make([]topField, len(members))
	for n, m := range members {
		fields[n] = topField{key: m.key, raw: b[m.vstart:m.vend]}
	}
	return fields, true
}
