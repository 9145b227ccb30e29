package tool

import (
	"encoding/json"
	"slices"
	"sync"
)

// Compiled schemas are shared by every session of the process: the
// built-in tools declare the same schema bytes in each session, and
// compiling one costs far more than a session's other set-up. The cache is
// keyed by the exact schema bytes, so two tools share a *Schema only when
// their schemas are byte-identical.
//
// Schemas come also from custom tools and MCP servers, which a peer
// controls, so the cache is bounded: by entry count and by the total size
// of the cached schema texts, and a schema above schemaCacheMaxSchema is
// compiled each time and never kept. When a new entry does not fit, other
// entries are dropped at random (Go's map order) until it does: a stream of
// distinct schemas churns the cache but cannot grow it. Failed
// compilations are not cached.
const (
	schemaCacheMaxEntries = 512
	schemaCacheMaxBytes   = 1 << 20 // 1 MiB of schema text
	schemaCacheMaxSchema  = 64 << 10
)

// schemaCache maps schema text to its compiled form.
type schemaCache struct {
	mu      sync.RWMutex
	entries map[string]*Schema // made by the first store
	bytes   int                // total length of the keys
	// Limits; the package's cache uses the constants above, tests smaller ones.
	maxEntries, maxBytes, maxSchema int
}

// compiled is the package's cache: static data, which costs the process
// nothing before its first schema.
var compiled = schemaCache{maxEntries: schemaCacheMaxEntries, maxBytes: schemaCacheMaxBytes, maxSchema: schemaCacheMaxSchema}

func newSchemaCache(maxEntries, maxBytes, maxSchema int) *schemaCache {
	return &schemaCache{maxEntries: maxEntries, maxBytes: maxBytes, maxSchema: maxSchema}
}

// get returns the compiled schema of raw, compiling and caching it on a
// miss. Concurrent misses for the same text may each compile; the last one
// stored wins, and all results are equivalent.
func (c *schemaCache) get(raw json.RawMessage) (*Schema, error) {
	c.mu.RLock()
	s, ok := c.entries[string(raw)]
	c.mu.RUnlock()
	if ok {
		return s, nil
	}
	// The cached schema keeps its own copy of the text: the caller may
	// reuse its buffer.
	own := slices.Clone(raw)
	s, err := compileSchema(own)
	if err != nil || len(raw) > c.maxSchema {
		return s, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[string(raw)]; ok {
		return old, nil
	}
	for k := range c.entries {
		if len(c.entries) < c.maxEntries && c.bytes+len(raw) <= c.maxBytes {
			break
		}
		delete(c.entries, k)
		c.bytes -= len(k)
	}
	if c.entries == nil {
		c.entries = map[string]*Schema{}
	}
	c.entries[string(own)] = s
	c.bytes += len(own)
	return s, nil
}

// len returns the number of cached schemas and the size of their texts.
func (c *schemaCache) len() (entries, bytes int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries), c.bytes
}
